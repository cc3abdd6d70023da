import type { FrameSink } from './stream-hub.js';

export type StreamSink = FrameSink & {
  /** False once the sink has all it wants (a list at its limit, a closed socket): sending stops. */
  wantsMore(): boolean;
  /** Without it, the sink takes every frame at once. */
  readonly backpressure?: Backpressure;
};

/** A sink whose reader can fall behind (a websocket whose client reads slowly). */
export type Backpressure = {
  /** True while the sink holds as much as it should until its reader takes some. */
  full(): boolean;
  /** Calls `go` once the sink is no longer full (or is gone). */
  whenReady(go: () => void): void;
};

export type OpenedStream = {
  /** Bounded streams end once `sent` settles; open-ended ones then stay subscribed. */
  readonly openEnded: boolean;
  /**
   * Settles once the stream has sent what it had when it opened: a bounded stream is complete,
   * an open-ended one follows the ledger from then on. Rejects if the sending failed.
   */
  readonly sent: Promise<void>;
  cancel(): void;
};

/**
 * What a stream reads per event-loop turn while it sends what it has: log entries for update and
 * completion streams (a transaction and its completion are two entries, so an update stream of
 * submitted commands sends about half as many frames), transactions for a descending stream,
 * contracts for a snapshot. Canton streams a backlog page by page under backpressure; sending
 * 20,000 transactions in one turn blocked the sandbox for about 300 ms (no submission served
 * meanwhile) and queued every frame in memory at once.
 */
export const ELEMENTS_PER_TURN = 256;

/** A backlog being sent: `sent` settles when it is (see OpenedStream.sent); `stop` ends it early. */
export type PacedSending = { readonly sent: Promise<void>; readonly stop: () => void };

/**
 * Sends a stream's backlog turn by turn: `pull(max)` reads at most `max` elements, sends what
 * the stream shows of them and says whether the backlog is done. The first turn runs at once, so
 * a short backlog is sent, and an open-ended stream subscribed, within the call. Between turns
 * the sandbox serves other work; a full sink (see `Backpressure`) is waited for. After `stop`,
 * no turn pulls again.
 */
export function pacedSend(sink: StreamSink, pull: (max: number) => boolean): PacedSending {
  let stopped = false;
  const more = (): boolean => !stopped && sink.wantsMore();
  const sent = new Promise<void>((resolve, reject) => {
    const turn = (): void => {
      try {
        if (!more() || pull(ELEMENTS_PER_TURN) || !more()) {
          resolve();
          return;
        }
        const backpressure = sink.backpressure;
        if (backpressure?.full() === true) backpressure.whenReady(next);
        else next();
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    };
    const next = (): void => {
      setImmediate(turn);
    };
    turn();
  });
  return {
    sent,
    stop: () => {
      stopped = true;
    },
  };
}
