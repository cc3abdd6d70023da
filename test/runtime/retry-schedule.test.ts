import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/core/seeded-random.js';
import { exhausted, nextAttempt } from '../../src/runtime/retry-schedule.js';
import { payload } from './tracker-fixture.js';
import { intentRecord, ledgerError } from './tracker-samples.js';

const retry = payload().retry; // 5 attempts, 1 s doubling to 8 s
const NOW = 1_000_000;

describe('exhausted', () => {
  it('gives up after maxAttempts, or at the deadline', () => {
    expect(exhausted({ record: intentRecord({ attempts: 4 }), retry }, NOW)).toBeUndefined();
    expect(exhausted({ record: intentRecord({ attempts: 5 }), retry }, NOW)).toBe('max-attempts');
    const record = intentRecord({ attempts: 1, deadline: NOW + 10 });
    expect(exhausted({ record, retry }, NOW + 9)).toBeUndefined();
    expect(exhausted({ record, retry }, NOW + 10)).toBe('deadline');
  });
});

describe('nextAttempt', () => {
  it('backs off with equal jitter over the attempts made', () => {
    const random = new SeededRandom(1);
    const err = new Error('lost');
    const delays = [1, 2, 3, 4].map((attempts) => {
      const next = nextAttempt({ record: intentRecord({ attempts }), retry, err }, NOW, random);
      if (next.kind !== 'retry') throw new Error('expected a retry');
      expect(next.at).toBe(NOW + next.delayMs);
      return next.delayMs;
    });
    // Ceilings 1 s, 2 s, 4 s, 8 s: each delay is between half of it and all of it.
    [1000, 2000, 4000, 8000].forEach((ceiling, i) => {
      expect(delays[i]).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delays[i]).toBeLessThanOrEqual(ceiling);
    });
  });

  it('never retries sooner than the participant asks', () => {
    const err = ledgerError('ABORTED_DUE_TO_SHUTDOWN', 1);
    const next = nextAttempt(
      { record: intentRecord({ attempts: 1 }), retry, err },
      NOW,
      new SeededRandom(1),
    );
    expect(next).toEqual({ kind: 'retry', delayMs: 10_000, at: NOW + 10_000 });
  });

  it('takes an override instead of the backoff', () => {
    const next = nextAttempt(
      { record: intentRecord({ attempts: 3 }), retry, err: undefined, delayOverrideMs: 0 },
      NOW,
      new SeededRandom(1),
    );
    expect(next).toEqual({ kind: 'retry', delayMs: 0, at: NOW });
  });

  it('gives up when the attempts are spent or the retry would pass the deadline', () => {
    const random = new SeededRandom(1);
    expect(
      nextAttempt({ record: intentRecord({ attempts: 5 }), retry, err: undefined }, NOW, random),
    ).toEqual({
      kind: 'give-up',
      reason: 'max-attempts',
    });
    const record = intentRecord({ attempts: 1, deadline: NOW + 100 });
    expect(nextAttempt({ record, retry, err: undefined }, NOW, random)).toEqual({
      kind: 'give-up',
      reason: 'deadline',
    });
  });
});
