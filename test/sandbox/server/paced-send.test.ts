import { describe, expect, it } from 'vitest';
import {
  ELEMENTS_PER_TURN,
  pacedSend,
  type StreamSink,
} from '../../../src/sandbox/server/paced-send.js';

/** A backlog of `n` numbered frames, pulled `max` at a time into the sink. */
function backlog(n: number, sink: StreamSink): (max: number) => boolean {
  let next = 0;
  return (max) => {
    const stop = Math.min(n, next + max);
    while (next < stop && sink.wantsMore()) sink.send(String(next++));
    return next >= n;
  };
}

function collecting(extra: Partial<StreamSink> = {}): StreamSink & { frames: string[] } {
  const frames: string[] = [];
  return {
    frames,
    send: (f) => frames.push(f),
    drop: () => undefined,
    wantsMore: () => true,
    ...extra,
  };
}

describe('pacedSend', () => {
  it('sends one turn of frames within the call and the rest in later turns, in order', async () => {
    const sink = collecting();
    const { sent } = pacedSend(sink, backlog(3 * ELEMENTS_PER_TURN + 5, sink));
    expect(sink.frames).toHaveLength(ELEMENTS_PER_TURN);
    await sent;
    expect(sink.frames).toEqual(
      Array.from({ length: 3 * ELEMENTS_PER_TURN + 5 }, (_, i) => String(i)),
    );
  });

  it('sends a short backlog wholly within the call', async () => {
    const sink = collecting();
    const { sent } = pacedSend(sink, backlog(10, sink));
    expect(sink.frames).toHaveLength(10);
    await expect(sent).resolves.toBeUndefined();
  });

  it('waits while the sink is full and goes on when it says it is ready', async () => {
    let full = true;
    let ready: (() => void) | undefined;
    const sink = collecting({
      backpressure: {
        full: () => full,
        whenReady: (go) => {
          ready = go;
        },
      },
    });
    const { sent } = pacedSend(sink, backlog(2 * ELEMENTS_PER_TURN, sink));
    expect(sink.frames).toHaveLength(ELEMENTS_PER_TURN);
    // Turns pass; nothing more goes while the sink is full.
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(sink.frames).toHaveLength(ELEMENTS_PER_TURN);
    expect(ready).toBeDefined();
    full = false;
    ready!();
    await sent;
    expect(sink.frames).toHaveLength(2 * ELEMENTS_PER_TURN);
  });

  it('stops once the sink wants no more', async () => {
    let wants = true;
    const sink = collecting({ wantsMore: () => wants });
    const { sent } = pacedSend(sink, backlog(10 * ELEMENTS_PER_TURN, sink));
    wants = false;
    await sent;
    expect(sink.frames).toHaveLength(ELEMENTS_PER_TURN);
  });

  it('pulls no more once stopped', async () => {
    const sink = collecting();
    const sending = pacedSend(sink, backlog(10 * ELEMENTS_PER_TURN, sink));
    sending.stop();
    await sending.sent;
    expect(sink.frames).toHaveLength(ELEMENTS_PER_TURN);
  });

  it('rejects when a turn throws', async () => {
    const sink = collecting();
    let turns = 0;
    const { sent } = pacedSend(sink, () => {
      turns++;
      if (turns === 2) throw new Error('projection failed');
      return false;
    });
    await expect(sent).rejects.toThrow('projection failed');
  });
});
