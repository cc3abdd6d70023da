import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/fake-clock.js';
import {
  GUESS_BURST,
  GUESS_REFILL_MS,
  GuessLimiter,
} from '../../../src/runtime/ops/guess-limiter.js';

describe('GuessLimiter', () => {
  it(`lets an address send ${GUESS_BURST} wrong tokens, then one per ${GUESS_REFILL_MS / 1000} s`, () => {
    const clock = new FakeClock();
    const g = new GuessLimiter(clock);
    for (let i = 0; i < GUESS_BURST; i++) {
      expect(g.waitMs('10.0.0.1')).toBe(0);
      g.failed('10.0.0.1');
    }
    expect(g.waitMs('10.0.0.1')).toBe(GUESS_REFILL_MS);
    // Another address is not held back by the first one's guesses.
    expect(g.waitMs('10.0.0.2')).toBe(0);
    clock.set(clock.now() + GUESS_REFILL_MS - 1000);
    expect(g.waitMs('10.0.0.1')).toBe(1000);
    clock.set(clock.now() + 1000);
    expect(g.waitMs('10.0.0.1')).toBe(0);
    g.failed('10.0.0.1');
    expect(g.waitMs('10.0.0.1')).toBe(GUESS_REFILL_MS);
  });

  it('forgets an address once its tries are whole again', () => {
    const clock = new FakeClock();
    const g = new GuessLimiter(clock);
    for (let i = 0; i < GUESS_BURST; i++) g.failed('a');
    clock.set(clock.now() + GUESS_BURST * GUESS_REFILL_MS);
    expect(g.waitMs('a')).toBe(0);
    // Whole again: the next wrong token starts from a full allowance, not from a debt.
    g.failed('a');
    expect(g.waitMs('a')).toBe(0);
  });
});
