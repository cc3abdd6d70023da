import { afterEach, describe, expect, it } from 'vitest';
import { AbortError } from '../../src/core/abort-error.js';
import { FakeClock } from '../../src/core/fake-clock.js';
import { SeededRandom } from '../../src/core/seeded-random.js';
import { StreamFollower } from '../../src/runtime/follow-stream.js';
import { RuntimeError } from '../../src/runtime/runtime-error.js';
import { recordingLogger } from './bot-fixture.js';
import { apiError, AsyncQueue } from './fake-ledger.js';

type El = { readonly offset: number };

/** A follower over test-fed queues: `opened` lists where each stream began. */
function follower(options: { idleUntil?: () => boolean; afterIdle?: number } = {}) {
  const clock = new FakeClock(0);
  const stop = new AbortController();
  const logger = recordingLogger();
  const opened: { from: number; queue: AsyncQueue<El> }[] = [];
  const handled: number[] = [];
  const pruned: number[] = [];
  const failures: unknown[] = [];
  const authFailures: unknown[] = [];
  const f = new StreamFollower<El>({
    name: 'updates',
    signal: stop.signal,
    clock,
    random: new SeededRandom(3),
    restartBackoff: { initialMs: 1_000, maxMs: 8_000 },
    logger,
    open: (from, signal) => {
      if (options.idleUntil !== undefined && !options.idleUntil()) return undefined;
      const queue = new AsyncQueue<El>(signal);
      const failure = failures.shift();
      if (failure !== undefined) queue.fail(failure);
      opened.push({ from, queue });
      return queue;
    },
    handle: (e) => {
      handled.push(e.offset);
    },
    ...(options.afterIdle === undefined
      ? {}
      : { afterIdle: () => Promise.resolve(options.afterIdle!) }),
    onPruned: (from) => {
      pruned.push(from);
      return Promise.resolve(100);
    },
    onAuthFailure: (err) => authFailures.push(err),
  });
  const last = (): AsyncQueue<El> => opened[opened.length - 1]!.queue;
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 5; i++) await clock.advance(0);
  };
  return { f, clock, stop, logger, opened, handled, pruned, failures, authFailures, last, settle };
}

let running: { stop: AbortController; done: Promise<void> } | undefined;
afterEach(async () => {
  running?.stop.abort(new AbortError('test over'));
  await running?.done;
  running = undefined;
});

describe('StreamFollower', () => {
  it('handles each element in order and reopens after the last one when the stream ends', async () => {
    const t = follower();
    const done = t.f.run(10);
    running = { stop: t.stop, done };
    await t.settle();
    t.last().push({ offset: 11 }, { offset: 12 });
    t.last().end();
    await t.settle();
    expect(t.handled).toEqual([11, 12]);
    expect(t.opened.map((o) => o.from)).toEqual([10, 12]);
    t.stop.abort(new AbortError('stop'));
    await expect(done).resolves.toBeUndefined();
  });

  it('restart reopens from the last element handled, and leaves an element of the old stream', async () => {
    const t = follower();
    running = { stop: t.stop, done: t.f.run(0) };
    await t.settle();
    t.last().push({ offset: 1 });
    await t.settle();
    t.f.restart('new filter');
    t.opened[0]!.queue.push({ offset: 2 });
    await t.settle();
    expect(t.handled).toEqual([1]);
    expect(t.opened.map((o) => o.from)).toEqual([0, 1]);
    t.last().push({ offset: 2 });
    await t.settle();
    expect(t.handled).toEqual([1, 2]);
  });

  it('waits while there is nothing to follow, until a restart; then begins where afterIdle says', async () => {
    let ready = false;
    const t = follower({ idleUntil: () => ready, afterIdle: 50 });
    running = { stop: t.stop, done: t.f.run(5) };
    await t.clock.advance(60_000);
    expect(t.opened).toEqual([]);
    ready = true;
    t.f.restart('event rules added');
    await t.settle();
    expect(t.opened.map((o) => o.from)).toEqual([50]);
  });

  it('resumes where onPruned says after a refused read of pruned offsets', async () => {
    const t = follower();
    t.failures.push(apiError('PARTICIPANT_PRUNED_DATA_ACCESSED', 9, 9, 'pruned'));
    running = { stop: t.stop, done: t.f.run(5) };
    await t.settle();
    expect(t.pruned).toEqual([5]);
    expect(t.opened.map((o) => o.from)).toEqual([5, 100]);
  });

  it('reopens after an auth failure with backoff on the clock; progress resets the backoff', async () => {
    const t = follower();
    const unauthenticated = () =>
      apiError('NA', -1, 16, 'A security-sensitive error has been received', {}, 401);
    t.failures.push(unauthenticated(), unauthenticated());
    running = { stop: t.stop, done: t.f.run(0) };
    await t.settle();
    expect(t.opened).toHaveLength(1);
    await t.clock.advance(1_000);
    expect(t.opened).toHaveLength(2);
    await t.clock.advance(2_000);
    expect(t.opened).toHaveLength(3);
    const waits = t.logger.lines.filter((l) => l.msg === 'stream credentials refused; retrying');
    expect(waits.map((l) => l.fields.attempt)).toEqual([1, 2]);
    expect(waits[0]?.fields).toMatchObject({ stream: 'updates', errorCode: 'NA' });
    // Each one is handed on (for /readyz's reason).
    expect(t.authFailures).toHaveLength(2);
    // An element, then another refusal: the wait starts at the first step again.
    t.last().push({ offset: 1 });
    await t.settle();
    t.last().fail(unauthenticated());
    await t.settle();
    expect(waits.length + 1).toBe(
      t.logger.lines.filter((l) => l.msg === 'stream credentials refused; retrying').length,
    );
    expect(t.logger.lines.at(-1)?.fields.attempt).toBe(1);
  });

  it('fails with STREAM_FAILED on an error retrying cannot fix', async () => {
    const t = follower();
    t.failures.push(apiError('TEMPLATES_OR_INTERFACES_NOT_FOUND', 11, 5, 'no such template'));
    const done = t.f.run(0);
    await t.settle();
    await expect(done).rejects.toBeInstanceOf(RuntimeError);
    await expect(done).rejects.toMatchObject({ code: 'STREAM_FAILED' });
  });
});
