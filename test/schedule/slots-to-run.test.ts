import { describe, expect, it } from 'vitest';
import type { CatchUpPolicy, ScheduleTrigger } from '../../src/rules/compiled-rule.js';
import { parseCron } from '../../src/rules/parse-cron.js';
import { slotsToRun } from '../../src/schedule/slots-to-run.js';

const t = (iso: string): number => Date.parse(iso);
const isos = (slots: readonly number[]): string[] => slots.map((s) => new Date(s).toISOString());

function trigger(
  cron: string,
  catchUp: CatchUpPolicy,
  maxCatchUp = 10,
  timezone = 'Europe/Zurich',
): Pick<ScheduleTrigger, 'cronSpec' | 'timezone' | 'catchUp' | 'maxCatchUp'> {
  const cronSpec = parseCron(cron);
  if ('problem' in cronSpec) throw new Error(cronSpec.problem);
  return { cronSpec, timezone, catchUp, maxCatchUp };
}

// The bot completed the 09:00 slot of Friday 2026-01-02 (Zurich), then was down for three days
// and a bit: it comes back on Monday 2026-01-05 at 10:00 Zurich, after Monday's 09:00 slot.
const lastCompleted = t('2026-01-02T08:00:00Z');
const backAt = t('2026-01-05T09:00:00Z');

describe('slotsToRun: catch-up after 3 days of downtime', () => {
  it('hourly spec, none: no missed slot runs; all 72 are counted as skipped', () => {
    const plan = slotsToRun({
      trigger: trigger('0 * * * *', 'none'),
      after: lastCompleted,
      now: backAt + 600_000,
    });
    expect(plan.run).toEqual([]);
    expect(plan.skipped).toBe(73);
    expect(plan.upTo).toBe(backAt);
  });

  it('hourly spec, last: only the latest missed slot runs', () => {
    const plan = slotsToRun({
      trigger: trigger('0 * * * *', 'last'),
      after: lastCompleted,
      now: backAt + 600_000,
    });
    expect(isos(plan.run)).toEqual(['2026-01-05T09:00:00.000Z']);
    expect(plan.skipped).toBe(72);
  });

  it('hourly spec, all: the latest maxCatchUp missed slots run, in order', () => {
    const plan = slotsToRun({
      trigger: trigger('0 * * * *', 'all', 5),
      after: lastCompleted,
      now: backAt + 600_000,
    });
    expect(isos(plan.run)).toEqual([
      '2026-01-05T05:00:00.000Z',
      '2026-01-05T06:00:00.000Z',
      '2026-01-05T07:00:00.000Z',
      '2026-01-05T08:00:00.000Z',
      '2026-01-05T09:00:00.000Z',
    ]);
    expect(plan.skipped).toBe(68);
  });

  it('weekday spec, all: the weekend has no slots, Monday 09:00 is the only one missed', () => {
    const plan = slotsToRun({
      trigger: trigger('0 9 * * MON-FRI', 'all'),
      after: lastCompleted,
      now: backAt,
    });
    expect(isos(plan.run)).toEqual(['2026-01-05T08:00:00.000Z']);
    expect(plan.skipped).toBe(0);
  });

  it('an on-time slot runs under every policy, besides what the policy catches up', () => {
    const now = t('2026-01-05T09:00:05Z'); // 5 s after the 10:00 Zurich slot
    const none = slotsToRun({ trigger: trigger('0 * * * *', 'none'), after: lastCompleted, now });
    expect(isos(none.run)).toEqual(['2026-01-05T09:00:00.000Z']);
    expect(none.skipped).toBe(72);
    const all = slotsToRun({ trigger: trigger('0 * * * *', 'all', 2), after: lastCompleted, now });
    expect(isos(all.run)).toEqual([
      '2026-01-05T07:00:00.000Z',
      '2026-01-05T08:00:00.000Z',
      '2026-01-05T09:00:00.000Z',
    ]);
    expect(all.skipped).toBe(70);
  });

  it('a slot older than onTimeMs is missed, not on time', () => {
    const now = t('2026-01-05T09:02:00Z');
    expect(
      slotsToRun({ trigger: trigger('0 * * * *', 'none'), after: lastCompleted, now }).run,
    ).toEqual([]);
    expect(
      slotsToRun({
        trigger: trigger('0 * * * *', 'none'),
        after: lastCompleted,
        now,
        onTimeMs: 180_000,
      }).run,
    ).toEqual([t('2026-01-05T09:00:00Z')]);
  });

  it('nothing is missed by a rule that never ran, or when nothing is due', () => {
    expect(
      slotsToRun({ trigger: trigger('* * * * *', 'all'), after: undefined, now: backAt }),
    ).toEqual({ run: [], skipped: 0, upTo: undefined });
    expect(
      slotsToRun({ trigger: trigger('0 9 * * *', 'all'), after: backAt, now: backAt + 60_000 }),
    ).toEqual({ run: [], skipped: 0, upTo: backAt });
  });

  it('three days of an every-second spec are walked in bounded time and memory', () => {
    const started = performance.now();
    const plan = slotsToRun({
      trigger: trigger('* * * * * *', 'all', 3),
      after: lastCompleted,
      now: backAt,
    });
    // Three missed slots caught up, plus the on-time one.
    expect(plan.run).toEqual([backAt - 3000, backAt - 2000, backAt - 1000, backAt]);
    expect(plan.skipped).toBe((backAt - lastCompleted) / 1000 - 4);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
