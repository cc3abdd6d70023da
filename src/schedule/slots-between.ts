import type { CronSpec } from '../rules/compiled-rule.js';
import { offsetAt, resolveWallClock, wallClockOf } from './zone-offset.js';

/**
 * Slot computation: which instants a cron spec names in a time zone. Pure (no clock, no timers),
 * so missed slots, catch-up and daylight-saving changes are testable without waiting. Instants
 * are epoch milliseconds, always whole seconds.
 *
 * Daylight saving time, as Vixie cron does it:
 * - A spec that runs every hour (its hour field covers 0-23, e.g. `*\/15 * * * *`) follows real
 *   time. Wall-clock times the clocks jump over do not exist and are not slots; when clocks go
 *   back, the repeated hour is a second hour of real time and its times are slots twice.
 * - A spec with fixed hours (`30 2 * * *`) names one slot per matching calendar day and time:
 *   a time the clocks jump over (02:30 on Europe/Zurich's spring-forward day) runs at the end of
 *   the jump (03:00 CEST, which is 01:00 UTC), and a repeated time (02:30 on the fall-back day)
 *   runs once, at its first occurrence (02:30 CEST).
 * Two names for one instant (02:00 and 02:30 both moved to 03:00, say) are one slot.
 */

const DAY_MS = 86_400_000;
/** Local days span at most this much beyond their UTC day (zone offsets stay within ±18 h). */
const MAX_OFFSET_MS = 18 * 3_600_000;
/** How far ahead `nextSlots` looks: 8 leap cycles, enough for five Feb 29ths. */
export const SLOT_HORIZON_DAYS = 366 * 32;

/** The slots in (`fromExclusive`, `toInclusive`], ascending. */
export function slotsBetween(
  spec: CronSpec,
  timeZone: string,
  fromExclusive: number,
  toInclusive: number,
): number[] {
  const out: number[] = [];
  for (const slot of iterateSlots(spec, timeZone, fromExclusive, toInclusive)) out.push(slot);
  return out;
}

/** The next `n` slots after `after` (exclusive); fewer if the spec names fewer within 32 years. */
export function nextSlots(spec: CronSpec, timeZone: string, after: number, n: number): number[] {
  const out: number[] = [];
  if (n <= 0) return out;
  for (const slot of iterateSlots(spec, timeZone, after)) {
    out.push(slot);
    if (out.length >= n) break;
  }
  return out;
}

/** The latest slot at or before `at`, looking back at most `lookBackDays`; undefined if none. */
export function previousSlot(
  spec: CronSpec,
  timeZone: string,
  at: number,
  lookBackDays = 366 * 8,
): number | undefined {
  // Walk back a growing window, so frequent specs cost little and rare ones still are found.
  for (let days = 1; ; days = Math.min(days * 4, lookBackDays)) {
    let last: number | undefined;
    for (const slot of iterateSlots(spec, timeZone, at - days * DAY_MS, at)) last = slot;
    if (last !== undefined || days >= lookBackDays) return last;
  }
}

/**
 * The slots after `fromExclusive` up to `toInclusive` (or up to SLOT_HORIZON_DAYS ahead), ascending,
 * computed lazily one local day at a time.
 */
export function* iterateSlots(
  spec: CronSpec,
  timeZone: string,
  fromExclusive: number,
  toInclusive = Number.POSITIVE_INFINITY,
): Generator<number, void, undefined> {
  const realTime = spec.hours.length === 24;
  const firstDay = Math.floor(wallClockOf(fromExclusive, timeZone) / DAY_MS) * DAY_MS;
  const lastDay = firstDay + SLOT_HORIZON_DAYS * DAY_MS;
  for (let day = firstDay; day <= lastDay; day += DAY_MS) {
    // Every instant of this local day is at least day - 18h.
    if (day - MAX_OFFSET_MS > toInclusive) return;
    if (!dayMatches(spec, day)) continue;
    const slots = slotsOfDay(spec, timeZone, day, realTime);
    for (const slot of slots) {
      if (slot > toInclusive) return;
      if (slot > fromExclusive) yield slot;
    }
  }
}

function dayMatches(spec: CronSpec, day: number): boolean {
  const date = new Date(day);
  if (!spec.months.includes(date.getUTCMonth() + 1)) return false;
  const dom = spec.daysOfMonth.includes(date.getUTCDate());
  const dow = spec.daysOfWeek.includes(date.getUTCDay());
  if (spec.dayOfMonthStar && spec.dayOfWeekStar) return true;
  if (spec.dayOfMonthStar) return dow;
  if (spec.dayOfWeekStar) return dom;
  // Classic cron: when both day fields are restricted, either may match.
  return dom || dow;
}

function slotsOfDay(spec: CronSpec, timeZone: string, day: number, realTime: boolean): number[] {
  const startOffset = offsetAt(day - MAX_OFFSET_MS, timeZone);
  const steady = startOffset === offsetAt(day + DAY_MS + MAX_OFFSET_MS, timeZone);
  const slots: number[] = [];
  for (const hour of spec.hours) {
    for (const minute of spec.minutes) {
      for (const second of spec.seconds) {
        const wall = day + hour * 3_600_000 + minute * 60_000 + second * 1000;
        if (steady) {
          slots.push(wall - startOffset);
          continue;
        }
        const { instants, gapEnd } = resolveWallClock(wall, timeZone);
        if (instants.length === 0) {
          if (!realTime && gapEnd !== undefined) slots.push(gapEnd);
        } else if (realTime) {
          slots.push(...instants);
        } else {
          slots.push(instants[0]!);
        }
      }
    }
  }
  if (steady) return slots;
  slots.sort((a, b) => a - b);
  return slots.filter((slot, i) => i === 0 || slot !== slots[i - 1]);
}
