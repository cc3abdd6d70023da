import { describe, expect, it } from 'vitest';
import { AbortError } from '../../src/core/abort-error.js';
import { FakeClock } from '../../src/core/fake-clock.js';
import { SeededRandom } from '../../src/core/seeded-random.js';
import { retryOnClock } from '../../src/runtime/retry-on-clock.js';

const backoff = { initialMs: 1_000, maxMs: 4_000 };

function setup() {
  const clock = new FakeClock(0);
  const abort = new AbortController();
  const waits: { step: number; delayMs: number }[] = [];
  const options = {
    timing: { clock, random: new SeededRandom(1), restartBackoff: backoff },
    signal: abort.signal,
    onRetry: (_e: Error, w: { step: number; delayMs: number }) => waits.push(w),
  };
  return { clock, abort, waits, options };
}

describe('retryOnClock', () => {
  it('retries with jittered backoff on the injected clock until the call succeeds', async () => {
    const { clock, waits, options } = setup();
    let calls = 0;
    const result = retryOnClock((attempt) => {
      calls += 1;
      return attempt < 3
        ? Promise.reject(new Error(`failure ${attempt}`))
        : Promise.resolve('done');
    }, options);
    await clock.advance(0);
    expect(calls).toBe(1);
    expect(waits.map((w) => w.step)).toEqual([0]);
    expect(waits[0]!.delayMs).toBeGreaterThanOrEqual(500);
    expect(waits[0]!.delayMs).toBeLessThanOrEqual(1_000);
    await clock.advance(waits[0]!.delayMs - 1);
    expect(calls).toBe(1);
    await clock.advance(1);
    expect(calls).toBe(2);
    await clock.advance(4_000);
    await expect(result).resolves.toBe('done');
    expect(calls).toBe(3);
    expect(waits.map((w) => w.step)).toEqual([0, 1]);
  });

  it('rejects at once with a failure that is not retryable', async () => {
    const { waits, options } = setup();
    const final = new Error('final');
    await expect(
      retryOnClock(() => Promise.reject(final), { ...options, retryable: () => false }),
    ).rejects.toBe(final);
    expect(waits).toEqual([]);
  });

  it('does not retry a TypeError (a bug, not a transient failure)', async () => {
    const { waits, options } = setup();
    await expect(
      retryOnClock(() => Promise.reject(new TypeError('x is undefined')), options),
    ).rejects.toThrow(TypeError);
    expect(waits).toEqual([]);
  });

  it('stops waiting when aborted, and logs no retry for a failure after the abort', async () => {
    const { clock, abort, waits, options } = setup();
    const result = retryOnClock(() => Promise.reject(new Error('down')), options);
    await clock.advance(0);
    expect(waits).toHaveLength(1);
    abort.abort(new AbortError('stopping'));
    await expect(result).rejects.toBeInstanceOf(AbortError);
    expect(waits).toHaveLength(1);
  });

  it('takes the backoff step from `step` when given (a follower resets it on progress)', async () => {
    const { clock, waits, options } = setup();
    let n = 0;
    const result = retryOnClock(
      () => {
        n += 1;
        return n < 3 ? Promise.reject(new Error('again')) : Promise.resolve();
      },
      { ...options, step: () => 0 },
    );
    await clock.advance(10_000);
    await result;
    expect(waits.map((w) => w.step)).toEqual([0, 0]);
  });
});
