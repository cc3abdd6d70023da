import { describe, expect, it } from 'vitest';
import type { CronSpec } from '../../src/rules/compiled-rule.js';
import { parseCron } from '../../src/rules/parse-cron.js';
import {
  iterateSlots,
  nextSlots,
  previousSlot,
  slotsBetween,
} from '../../src/schedule/slots-between.js';
import { offsetAt, resolveWallClock } from '../../src/schedule/zone-offset.js';

function cron(text: string): CronSpec {
  const spec = parseCron(text);
  if ('problem' in spec) throw new Error(spec.problem);
  return spec;
}

const t = (iso: string): number => Date.parse(iso);

/** The 31st of February, which parseCron refuses: a spec no date matches. */
const FEB_31: CronSpec = { ...cron('0 0 1 2 *'), daysOfMonth: [31] };
const isos = (slots: readonly number[]): string[] => slots.map((s) => new Date(s).toISOString());
const ZURICH = 'Europe/Zurich';

describe('zone offsets', () => {
  it('knows Zurich winter and summer time', () => {
    expect(offsetAt(t('2026-01-15T12:00:00Z'), ZURICH)).toBe(3_600_000);
    expect(offsetAt(t('2026-07-15T12:00:00Z'), ZURICH)).toBe(7_200_000);
    expect(offsetAt(t('2026-07-15T12:00:00.250Z'), 'UTC')).toBe(0);
  });

  it('resolves ordinary, skipped and repeated wall-clock times', () => {
    expect(resolveWallClock(t('2026-01-15T09:00:00Z'), ZURICH)).toEqual({
      instants: [t('2026-01-15T08:00:00Z')],
    });
    // 2026-03-29 02:30 does not exist in Zurich: clocks jump from 02:00 CET to 03:00 CEST.
    expect(resolveWallClock(t('2026-03-29T02:30:00Z'), ZURICH)).toEqual({
      instants: [],
      gapEnd: t('2026-03-29T01:00:00Z'),
    });
    // 2026-10-25 02:30 happens twice: first in CEST, then in CET.
    expect(resolveWallClock(t('2026-10-25T02:30:00Z'), ZURICH)).toEqual({
      instants: [t('2026-10-25T00:30:00Z'), t('2026-10-25T01:30:00Z')],
    });
  });
});

describe('slotsBetween', () => {
  it('every minute: from exclusive, to inclusive', () => {
    expect(
      isos(
        slotsBetween(
          cron('* * * * *'),
          'UTC',
          t('2026-01-01T00:00:00Z'),
          t('2026-01-01T00:03:00Z'),
        ),
      ),
    ).toEqual(['2026-01-01T00:01:00.000Z', '2026-01-01T00:02:00.000Z', '2026-01-01T00:03:00.000Z']);
    // A `from` between slots: the next whole minute is the first slot.
    expect(
      isos(
        slotsBetween(
          cron('* * * * *'),
          'UTC',
          t('2026-01-01T00:00:30Z'),
          t('2026-01-01T00:01:59Z'),
        ),
      ),
    ).toEqual(['2026-01-01T00:01:00.000Z']);
    expect(
      slotsBetween(cron('* * * * *'), ZURICH, t('2026-01-01T00:00:00Z'), t('2026-01-02T00:00:00Z')),
    ).toHaveLength(1440);
  });

  it('every 5 seconds with the six-field form', () => {
    expect(
      isos(
        slotsBetween(
          cron('*/5 * * * * *'),
          ZURICH,
          t('2026-01-01T00:00:00Z'),
          t('2026-01-01T00:00:20Z'),
        ),
      ),
    ).toEqual([
      '2026-01-01T00:00:05.000Z',
      '2026-01-01T00:00:10.000Z',
      '2026-01-01T00:00:15.000Z',
      '2026-01-01T00:00:20.000Z',
    ]);
  });

  it('weekdays at 9:00 Zurich time, winter and summer', () => {
    // Mon 2026-03-02 .. Sun 2026-03-08 (CET, UTC+1).
    expect(
      isos(
        slotsBetween(
          cron('0 9 * * MON-FRI'),
          ZURICH,
          t('2026-03-01T00:00:00Z'),
          t('2026-03-08T23:59:59Z'),
        ),
      ),
    ).toEqual([
      '2026-03-02T08:00:00.000Z',
      '2026-03-03T08:00:00.000Z',
      '2026-03-04T08:00:00.000Z',
      '2026-03-05T08:00:00.000Z',
      '2026-03-06T08:00:00.000Z',
    ]);
    // Mon 2026-07-06 .. (CEST, UTC+2).
    expect(isos(nextSlots(cron('0 9 * * MON-FRI'), ZURICH, t('2026-07-03T08:00:00Z'), 3))).toEqual([
      '2026-07-06T07:00:00.000Z',
      '2026-07-07T07:00:00.000Z',
      '2026-07-08T07:00:00.000Z',
    ]);
  });

  it('monthly on the first at 6:30 Zurich time, over a year', () => {
    const slots = slotsBetween(
      cron('30 6 1 * *'),
      ZURICH,
      t('2025-12-31T00:00:00Z'),
      t('2026-12-31T00:00:00Z'),
    );
    expect(slots).toHaveLength(12);
    expect(isos(slots).slice(0, 4)).toEqual([
      '2026-01-01T05:30:00.000Z',
      '2026-02-01T05:30:00.000Z',
      '2026-03-01T05:30:00.000Z',
      '2026-04-01T04:30:00.000Z',
    ]);
    expect(isos(slots)[11]).toBe('2026-12-01T05:30:00.000Z');
  });

  it('restricted day-of-month and day-of-week: either matches (classic cron)', () => {
    // The 13th, or any Friday, in February 2026 (Fridays: 6, 13, 20, 27).
    const days = slotsBetween(
      cron('0 0 13 * FRI'),
      'UTC',
      t('2026-02-01T00:00:00Z'),
      t('2026-02-28T23:00:00Z'),
    ).map((s) => new Date(s).getUTCDate());
    expect(days).toEqual([6, 13, 20, 27]);
    const either = slotsBetween(
      cron('0 0 12 * FRI'),
      'UTC',
      t('2026-02-01T00:00:00Z'),
      t('2026-02-28T23:00:00Z'),
    );
    expect(either.map((s) => new Date(s).getUTCDate())).toEqual([6, 12, 13, 20, 27]);
  });

  describe('Europe/Zurich spring-forward day (2026-03-29, 02:00 CET -> 03:00 CEST)', () => {
    it('a fixed 02:30 slot, which does not exist that day, runs at 03:00 CEST, once', () => {
      expect(
        isos(
          slotsBetween(
            cron('30 2 * * *'),
            ZURICH,
            t('2026-03-27T12:00:00Z'),
            t('2026-03-30T12:00:00Z'),
          ),
        ),
      ).toEqual([
        '2026-03-28T01:30:00.000Z', // 02:30 CET
        '2026-03-29T01:00:00.000Z', // 03:00 CEST: the end of the jump
        '2026-03-30T00:30:00.000Z', // 02:30 CEST
      ]);
    });

    it('02:00 and 02:30 both moved to 03:00, plus 03:00 itself, are one slot', () => {
      expect(
        isos(
          slotsBetween(
            cron('0,30 2,3 29 3 *'),
            ZURICH,
            t('2026-03-28T12:00:00Z'),
            t('2026-03-29T12:00:00Z'),
          ),
        ),
      ).toEqual(['2026-03-29T01:00:00.000Z', '2026-03-29T01:30:00.000Z']);
    });

    it('an hourly spec follows real time: the missing hour has no slot', () => {
      const day = slotsBetween(
        cron('30 * * * *'),
        ZURICH,
        t('2026-03-28T23:00:00Z'),
        t('2026-03-29T21:59:59Z'),
      );
      expect(day).toHaveLength(23);
      expect(isos(day).slice(0, 3)).toEqual([
        '2026-03-28T23:30:00.000Z', // 00:30 CET
        '2026-03-29T00:30:00.000Z', // 01:30 CET
        '2026-03-29T01:30:00.000Z', // 03:30 CEST
      ]);
      for (let i = 1; i < day.length; i++) expect(day[i]! - day[i - 1]!).toBe(3_600_000);
    });
  });

  describe('Europe/Zurich fall-back day (2026-10-25, 03:00 CEST -> 02:00 CET)', () => {
    it('a fixed 02:30 slot happens once, at its first occurrence', () => {
      expect(
        isos(
          slotsBetween(
            cron('30 2 * * *'),
            ZURICH,
            t('2026-10-23T12:00:00Z'),
            t('2026-10-26T12:00:00Z'),
          ),
        ),
      ).toEqual([
        '2026-10-24T00:30:00.000Z', // 02:30 CEST
        '2026-10-25T00:30:00.000Z', // 02:30 CEST, not again at 02:30 CET
        '2026-10-26T01:30:00.000Z', // 02:30 CET
      ]);
    });

    it('every 15 minutes follows real time: 100 slots on the 25-hour day, evenly spaced', () => {
      const day = slotsBetween(
        cron('*/15 * * * *'),
        ZURICH,
        t('2026-10-24T21:59:59Z'),
        t('2026-10-25T22:59:59Z'),
      );
      expect(day).toHaveLength(100);
      for (let i = 1; i < day.length; i++) expect(day[i]! - day[i - 1]!).toBe(900_000);
    });
  });

  it('America/New_York DST days as well (other rules, other dates)', () => {
    // 2026-03-08: 02:00 EST -> 03:00 EDT; 2026-11-01: 02:00 EDT -> 01:00 EST.
    expect(
      isos(
        slotsBetween(
          cron('30 2 * * *'),
          'America/New_York',
          t('2026-03-07T12:00:00Z'),
          t('2026-03-09T12:00:00Z'),
        ),
      ),
    ).toEqual(['2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z']);
    expect(
      isos(
        slotsBetween(
          cron('30 1 * * *'),
          'America/New_York',
          t('2026-10-31T12:00:00Z'),
          t('2026-11-02T12:00:00Z'),
        ),
      ),
    ).toEqual(['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']);
  });

  it('an empty range gives no slots', () => {
    expect(
      slotsBetween(cron('* * * * *'), 'UTC', t('2026-01-01T00:00:00Z'), t('2026-01-01T00:00:00Z')),
    ).toEqual([]);
    expect(
      slotsBetween(cron('* * * * *'), 'UTC', t('2026-01-01T00:05:00Z'), t('2026-01-01T00:00:00Z')),
    ).toEqual([]);
  });
});

describe('nextSlots and previousSlot', () => {
  it('the next 5 slots of a weekday spec skip the weekend', () => {
    // Thu 2026-01-01 10:00 Zurich.
    expect(isos(nextSlots(cron('0 9 * * MON-FRI'), ZURICH, t('2026-01-01T09:00:00Z'), 5))).toEqual([
      '2026-01-02T08:00:00.000Z',
      '2026-01-05T08:00:00.000Z',
      '2026-01-06T08:00:00.000Z',
      '2026-01-07T08:00:00.000Z',
      '2026-01-08T08:00:00.000Z',
    ]);
  });

  it('rare specs are found years ahead; impossible ones give none, quickly', () => {
    expect(isos(nextSlots(cron('0 0 29 2 *'), 'UTC', t('2026-01-01T00:00:00Z'), 2))).toEqual([
      '2028-02-29T00:00:00.000Z',
      '2032-02-29T00:00:00.000Z',
    ]);
    const started = performance.now();
    // parseCron refuses it; a spec made otherwise (a stored one) must still end.
    expect(nextSlots(FEB_31, 'UTC', t('2026-01-01T00:00:00Z'), 5)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('previousSlot is the latest slot at or before a time', () => {
    expect(previousSlot(cron('0 9 * * MON-FRI'), ZURICH, t('2026-01-05T07:59:59Z'))).toBe(
      t('2026-01-02T08:00:00Z'),
    );
    expect(previousSlot(cron('0 9 * * MON-FRI'), ZURICH, t('2026-01-05T08:00:00Z'))).toBe(
      t('2026-01-05T08:00:00Z'),
    );
    expect(previousSlot(FEB_31, 'UTC', t('2026-01-01T00:00:00Z'), 400)).toBeUndefined();
  });

  it('iterates lazily: the first of a year of every-second slots is immediate', () => {
    const it = iterateSlots(
      cron('* * * * * *'),
      ZURICH,
      t('2026-01-01T00:00:00Z'),
      t('2027-01-01T00:00:00Z'),
    );
    expect(it.next().value).toBe(t('2026-01-01T00:00:01Z'));
  });
});
