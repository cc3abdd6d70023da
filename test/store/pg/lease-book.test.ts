import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/fake-clock.js';
import { LeaseBook } from '../../../src/store/pg/lease-book.js';

describe('LeaseBook', () => {
  it('counts a lease valid for the lease period from when its request was sent', async () => {
    const clock = new FakeClock();
    const book = new LeaseBook(clock, 3_000);
    const sentAt = clock.now();
    await clock.advance(200); // the answer comes later than the request left
    book.acquired([{ ruleId: 'r1', generation: 4 }], sentAt);
    expect(book.generationOf('r1')).toBe(4);
    expect(book.isValid({ ruleId: 'r1', generation: 4 })).toBe(true);
    expect(book.isValid({ ruleId: 'r1', generation: 3 })).toBe(false);
    expect(book.isValid({ ruleId: 'r2', generation: 4 })).toBe(false);
    await clock.advance(2_799);
    expect(book.isValid({ ruleId: 'r1', generation: 4 })).toBe(true);
    await clock.advance(1);
    expect(book.isValid({ ruleId: 'r1', generation: 4 })).toBe(false);
  });

  it('renews only the generation it holds; expire drops and returns what is past its time', async () => {
    const clock = new FakeClock();
    const book = new LeaseBook(clock, 3_000);
    book.acquired(
      [
        { ruleId: 'a', generation: 1 },
        { ruleId: 'b', generation: 2 },
      ],
      clock.now(),
    );
    await clock.advance(2_000);
    book.renewed(
      [
        { ruleId: 'a', generation: 1 },
        { ruleId: 'b', generation: 9 },
      ],
      clock.now(),
    );
    await clock.advance(1_500); // b's time is up, a's renewal holds it to 5,000
    expect(book.expire()).toEqual([{ ruleId: 'b', generation: 2 }]);
    expect(book.held()).toEqual([{ ruleId: 'a', generation: 1 }]);
    expect(book.expire()).toEqual([]);
    await clock.advance(1_500);
    expect(book.expire()).toEqual([{ ruleId: 'a', generation: 1 }]);
    expect(book.size).toBe(0);
  });

  it('drop returns only the leases it held', () => {
    const clock = new FakeClock();
    const book = new LeaseBook(clock, 1_000);
    book.acquired([{ ruleId: 'a', generation: 1 }], clock.now());
    expect(book.drop(['a', 'zz'])).toEqual([{ ruleId: 'a', generation: 1 }]);
    expect(book.generationOf('a')).toBeUndefined();
  });
});
