import type { Clock, TimerHandle } from '../../core/clock.js';
import type { Completion, TransactionFormat } from '../../ledger/wire/wire-types.js';
import type { CommittedTransaction } from '../engine/committed-transaction.js';
import type { LogEntry } from '../engine/engine-types.js';
import type { LedgerEngine } from '../engine/ledger-engine.js';
import {
  completionCheckpoint,
  completionFrame,
  transactionUpdate,
  updateCheckpoint,
} from './frames.js';

/** Where a stream's frames go: a websocket or a list collector. */
export type FrameSink = {
  send(frame: string): void;
  /** The fault injector's abrupt drop (closeStreams*). */
  drop(): void;
};

type SubBase = {
  readonly sink: FrameSink;
  /** Highest offset the stream has considered (delivered or filtered out). */
  seen: number;
  /** Offset of the last checkpoint sent (initially the stream's begin). */
  checkpointed: number;
  lastActivityMs: number;
};

export type UpdateSubscription = SubBase & {
  readonly kind: 'updates';
  /** undefined: the stream wants no transactions (only checkpoints). */
  readonly format: TransactionFormat | undefined;
  readonly formatKey: string;
};

export type CompletionSubscription = SubBase & {
  readonly kind: 'completions';
  /** undefined: completions of every user. */
  readonly userId: string | undefined;
  /** undefined: every party (CanReadAsAnyParty). */
  readonly parties: ReadonlySet<string> | undefined;
};

export type Subscription = UpdateSubscription | CompletionSubscription;

/** Projects and serialises a transaction once per distinct format, whoever asks. */
export class TransactionFrameCache {
  readonly #engine: LedgerEngine;
  #tx: CommittedTransaction | undefined;
  readonly #frames = new Map<string, string | null>();

  constructor(engine: LedgerEngine) {
    this.#engine = engine;
  }

  frame(tx: CommittedTransaction, format: TransactionFormat, key: string): string | null {
    if (this.#tx !== tx) {
      this.#tx = tx;
      this.#frames.clear();
    }
    let f = this.#frames.get(key);
    if (f === undefined) {
      const projected = this.#engine.projectTransaction(tx, format);
      f = projected === null ? null : transactionUpdate(projected);
      this.#frames.set(key, f);
    }
    return f;
  }
}

/** The completion as a subscriber with `parties` sees it: actAs filtered, or undefined if hidden. */
export function completionFor(
  c: Completion,
  userId: string | undefined,
  parties: ReadonlySet<string> | undefined,
): Completion | undefined {
  if (userId !== undefined && c.userId !== userId) return undefined;
  if (parties === undefined) return c;
  let all = true;
  let any = false;
  for (const p of c.actAs) {
    if (parties.has(p)) any = true;
    else all = false;
  }
  if (!any) return undefined;
  return all ? c : { ...c, actAs: c.actAs.filter((p) => parties.has(p)) };
}

/**
 * Fans the engine's log out to the open-ended update and completion streams: each transaction is
 * projected and serialised once per distinct format, each completion once. Quiet streams get an
 * OffsetCheckpoint after `checkpointIntervalMs` when the ledger moved past what they last saw.
 */
export class StreamHub {
  readonly #engine: LedgerEngine;
  readonly #clock: Clock;
  readonly #checkpointMs: number;
  readonly #subs = new Set<Subscription>();
  /** Streams still sending what they had when they opened: not subscribed yet, open all the same. */
  readonly #sending = new Set<FrameSink>();
  readonly #cache: TransactionFrameCache;
  #unsubscribe: (() => void) | undefined;
  #ticker: TimerHandle | undefined;
  #dropTimer: TimerHandle | undefined;

  constructor(engine: LedgerEngine, clock: Clock, checkpointIntervalMs: number) {
    this.#engine = engine;
    this.#clock = clock;
    this.#checkpointMs = checkpointIntervalMs;
    this.#cache = new TransactionFrameCache(engine);
  }

  start(): void {
    this.#unsubscribe ??= this.#engine.subscribe((entry) => this.#onEntry(entry));
  }

  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    if (this.#ticker !== undefined) this.#clock.clearTimeout(this.#ticker);
    this.#ticker = undefined;
    this.setDropEvery(undefined);
    this.#subs.clear();
    this.#sending.clear();
  }

  get frameCache(): TransactionFrameCache {
    return this.#cache;
  }

  get size(): number {
    return this.#subs.size;
  }

  add(sub: Subscription): () => void {
    this.#subs.add(sub);
    this.#ensureTicker();
    return () => this.#subs.delete(sub);
  }

  /**
   * A stream sending its backlog (an update or completion stream, bounded or not) until the
   * returned function is called: the drop fault reaches it as it reaches subscribed streams.
   */
  addSending(sink: FrameSink): () => void {
    this.#sending.add(sink);
    return () => this.#sending.delete(sink);
  }

  /**
   * Fault: drop every open update and completion stream each `ms` (undefined: off), those still
   * sending their backlog included; `onDropped` counts them.
   */
  setDropEvery(ms: number | undefined, onDropped?: (streams: number) => void): void {
    if (this.#dropTimer !== undefined) this.#clock.clearTimeout(this.#dropTimer);
    this.#dropTimer = undefined;
    if (ms === undefined) return;
    const tick = (): void => {
      const dropped = [...this.#sending, ...[...this.#subs].map((s) => s.sink)];
      this.#sending.clear();
      this.#subs.clear();
      for (const sink of dropped) sink.drop();
      if (dropped.length > 0) onDropped?.(dropped.length);
      this.#dropTimer = this.#clock.setTimeout(tick, ms);
    };
    this.#dropTimer = this.#clock.setTimeout(tick, ms);
  }

  #ensureTicker(): void {
    if (this.#ticker !== undefined) return;
    const period = Math.max(1, Math.floor(this.#checkpointMs / 2));
    const tick = (): void => {
      this.#ticker = undefined;
      this.#checkpoints();
      if (this.#subs.size > 0) this.#ticker = this.#clock.setTimeout(tick, period);
    };
    this.#ticker = this.#clock.setTimeout(tick, period);
  }

  #checkpoints(): void {
    const now = this.#clock.now();
    const end = this.#engine.ledgerEnd();
    const sync = this.#engine.synchronizerId;
    let updateFrame: string | undefined;
    let completionFrameText: string | undefined;
    for (const s of this.#subs) {
      if (now - s.lastActivityMs < this.#checkpointMs) continue;
      if (s.seen < end || end <= s.checkpointed) continue;
      const frame =
        s.kind === 'updates'
          ? (updateFrame ??= updateCheckpoint(end, sync, now))
          : (completionFrameText ??= completionCheckpoint(end, sync, now));
      s.checkpointed = end;
      s.lastActivityMs = now;
      s.sink.send(frame);
    }
  }

  #onEntry(entry: LogEntry): void {
    if (this.#subs.size === 0) return;
    const now = this.#clock.now();
    let completionText: string | undefined;
    for (const s of this.#subs) {
      if (entry.offset > s.seen) s.seen = entry.offset;
      let frame: string | null | undefined;
      if (s.kind === 'updates') {
        if (entry.kind !== 'transaction' || s.format === undefined) continue;
        frame = this.#cache.frame(entry.transaction, s.format, s.formatKey);
      } else {
        if (entry.kind !== 'completion' || entry.lostInTransit === true) continue;
        const c = completionFor(entry.completion, s.userId, s.parties);
        if (c === undefined) continue;
        frame =
          c === entry.completion
            ? (completionText ??= completionFrame(entry.completion))
            : completionFrame(c);
      }
      if (frame === null) continue;
      s.lastActivityMs = now;
      s.sink.send(frame);
    }
  }
}
