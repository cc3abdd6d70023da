import { describe, expect, it } from 'vitest';
import { parseIsoInstant } from '../../src/core/iso-instant.js';

describe('parseIsoInstant', () => {
  it('reads a date, a time and a zone', () => {
    expect(parseIsoInstant('2026-01-05T09:00:00+01:00')).toBe(Date.UTC(2026, 0, 5, 8));
    expect(parseIsoInstant('2026-01-05T08:00Z')).toBe(Date.UTC(2026, 0, 5, 8));
    expect(parseIsoInstant('2026-01-05t08:00:00.123z')).toBe(Date.UTC(2026, 0, 5, 8, 0, 0, 123));
    expect(parseIsoInstant('2026-01-05T08:00:00-0530')).toBe(Date.UTC(2026, 0, 5, 13, 30));
    expect(parseIsoInstant('2028-02-29T00:00:00Z')).toBe(Date.UTC(2028, 1, 29));
  });

  it('refuses what Date.parse would take for something else', () => {
    for (const text of [
      '1', // the year 2001
      '2026', // a whole year
      '2026-01-05', // midnight UTC, or local: no time
      '2026-01-05T08:00:00', // local time
      'Mon, 05 Jan 2026 08:00:00 GMT',
      '2026-02-30T08:00:00Z', // rolled over into March
      '2027-02-29T08:00:00Z',
      '2026-01-05T25:00:00Z',
      ' 2026-01-05T08:00:00Z',
      '',
    ]) {
      expect(parseIsoInstant(text), text).toBeUndefined();
    }
  });
});
