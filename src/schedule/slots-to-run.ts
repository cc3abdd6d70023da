import type { ScheduleTrigger } from '../rules/compiled-rule.js';
import { iterateSlots } from './slots-between.js';

/** How late a slot may start and still count as on time rather than missed (default 60 s). */
export const DEFAULT_ON_TIME_MS = 60_000;

export type SlotsToRunInput = {
  readonly trigger: Pick<ScheduleTrigger, 'cronSpec' | 'timezone' | 'catchUp' | 'maxCatchUp'>;
  /**
   * Slots at or before this are done or were deliberately passed over: the rule's last completed
   * slot, or a later slot the scheduler skipped. Undefined: the rule has never run, so nothing
   * before `now` counts as missed.
   */
  readonly after: number | undefined;
  readonly now: number;
  readonly onTimeMs?: number;
};

export type SlotsToRun = {
  /** The slots to run, ascending. */
  readonly run: readonly number[];
  /** Missed slots the policy leaves out (counted and logged by the caller). */
  readonly skipped: number;
  /** The latest slot considered (run or skipped); the next call may start after it. */
  readonly upTo: number | undefined;
};

/**
 * The misfire policy. Of the slots in (`after`, `now`], the latest one is on time if it is at
 * most `onTimeMs` old and always runs; the others were missed (downtime, a long previous slot):
 * - `none`: run none of the missed slots;
 * - `last` (the default): run only the latest slot, on time or missed;
 * - `all`: run the missed slots too, the latest `maxCatchUp` of them, in order.
 *
 * Computing the missed slots walks the whole gap, one local day at a time, keeping at most
 * `maxCatchUp + 1` of them, so a long downtime costs time linear in its length and no memory.
 */
export function slotsToRun(input: SlotsToRunInput): SlotsToRun {
  const { trigger, after, now } = input;
  if (after === undefined || after >= now) return { run: [], skipped: 0, upTo: after };
  const onTimeMs = input.onTimeMs ?? DEFAULT_ON_TIME_MS;
  const keep = trigger.catchUp === 'all' ? trigger.maxCatchUp + 1 : 1;
  const recent: number[] = [];
  let total = 0;
  for (const slot of iterateSlots(trigger.cronSpec, trigger.timezone, after, now)) {
    total++;
    recent.push(slot);
    if (recent.length > keep) recent.shift();
  }
  const latest = recent[recent.length - 1];
  if (latest === undefined) return { run: [], skipped: 0, upTo: after };
  const onTime = now - latest <= onTimeMs;
  let run: number[];
  if (trigger.catchUp === 'last') run = [latest];
  else if (trigger.catchUp === 'none') run = onTime ? [latest] : [];
  else run = onTime ? recent : recent.slice(-trigger.maxCatchUp);
  return { run, skipped: total - run.length, upTo: latest };
}
