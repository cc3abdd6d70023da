/**
 * Time-zone arithmetic on top of `Intl.DateTimeFormat`, which knows the IANA database of the
 * running Node. Only what slot computation needs: the UTC offset of a zone at an instant, and the
 * instant(s) a local wall-clock time names.
 */

import { zoneFormats } from '../core/zone-formats.js';

const formatFor = zoneFormats('en-US', {
  hourCycle: 'h23',
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
  era: 'short',
});

/** The local wall-clock time of `instant` in `timeZone`, written as if it were UTC (epoch ms). */
export function wallClockOf(instant: number, timeZone: string): number {
  const parts = formatFor(timeZone).formatToParts(instant);
  const fields: Record<string, number> = {};
  let bc = false;
  for (const part of parts) {
    if (part.type === 'era') bc = part.value.startsWith('B');
    else if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  const year = bc ? 1 - (fields.year ?? 0) : (fields.year ?? 0);
  const utc = new Date(0);
  utc.setUTCFullYear(year, (fields.month ?? 1) - 1, fields.day ?? 1);
  utc.setUTCHours(fields.hour ?? 0, fields.minute ?? 0, fields.second ?? 0, 0);
  // Intl drops milliseconds; keep them, zones never offset by a fraction of a second.
  return utc.getTime() + (((instant % 1000) + 1000) % 1000);
}

/** The zone's UTC offset at `instant` in ms (local = UTC + offset; Zurich in winter: +3,600,000). */
export function offsetAt(instant: number, timeZone: string): number {
  return wallClockOf(instant, timeZone) - instant;
}

/** Any zone's offset lies within ±18 h, so a local day spans at most these UTC bounds. */
const MAX_OFFSET_MS = 18 * 3_600_000;

/**
 * Where the local wall-clock time `wall` (written as UTC epoch ms) falls in `timeZone`:
 * - `instants` of length 1: an ordinary time;
 * - length 2 (earlier first): a repeated time, when clocks go back;
 * - length 0: a time clocks jump over; `gapEnd` is then the instant of the jump, i.e. the first
 *   instant after the gap (02:30 on Zurich's spring-forward day gives 03:00 CEST = 01:00 UTC).
 *
 * Assumes at most one offset change within ±18 hours, true of every real zone.
 */
export function resolveWallClock(
  wall: number,
  timeZone: string,
): { readonly instants: readonly number[]; readonly gapEnd?: number } {
  const before = offsetAt(wall - MAX_OFFSET_MS, timeZone);
  const after = offsetAt(wall + MAX_OFFSET_MS, timeZone);
  const instants: number[] = [];
  for (const offset of before === after ? [before] : [before, after]) {
    const instant = wall - offset;
    if (offsetAt(instant, timeZone) === offset) instants.push(instant);
  }
  instants.sort((a, b) => a - b);
  if (instants.length > 0 || before === after) return { instants };
  // In a gap: `wall - after` still has the old offset, `wall - before` already the new one.
  let lo = wall - Math.max(before, after);
  let hi = wall - Math.min(before, after);
  const newOffset = offsetAt(hi, timeZone);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(mid, timeZone) === newOffset) hi = mid;
    else lo = mid;
  }
  return { instants, gapEnd: hi };
}
