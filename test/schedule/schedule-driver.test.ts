import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import type { Logger } from '../../src/core/logger.js';
import type { Random } from '../../src/core/random.js';
import type { CompiledRule } from '../../src/rules/compiled-rule.js';
import type { SlotRunResult } from '../../src/schedule/run-slot.js';
import { ScheduleDriver } from '../../src/schedule/schedule-driver.js';
import { clockSlotScheduler } from '../../src/schedule/slot-scheduler.js';
import { rules } from '../rules/rule-fixtures.js';

const MINUTE = 60_000;
const START = Date.parse('2026-01-05T08:00:30Z');

function scheduleRule(schedule: string, id = 'tick'): CompiledRule {
  return rules(`
version: 1
rules:
  - id: ${id}
    schedule: ${schedule}
    then:
      - create: { template: "#invoices:Audit:Entry", createArguments: { at: "\${{ now }}" } }
        actAs: [auditor]
`).rules[0]!;
}

type SlotRecordLike = {
  lastCompletedSlot?: number;
  inProgressSlot?: number;
  snapshotOffset?: number;
};

class Harness {
  readonly clock: FakeClock;
  readonly runs: { slot: number; at: number }[] = [];
  readonly records = new Map<string, SlotRecordLike>();
  readonly logs: { level: string; fields: object; msg: string }[] = [];
  /** How long each run takes, on the fake clock. */
  runMs = 0;
  failNext = 0;
  /** The rules the driver is told are paused. */
  readonly paused = new Set<string>();
  random: Random = { next: () => 0.5, uuid: () => '00000000-0000-4000-8000-000000000000' };
  driver: ScheduleDriver;

  constructor(rulesToDrive: readonly CompiledRule[], start = START) {
    this.clock = new FakeClock(start);
    const log =
      (level: string) =>
      (fields: object, msg: string): void => {
        this.logs.push({ level, fields, msg });
      };
    const logger: Logger = {
      trace: log('trace'),
      debug: log('debug'),
      info: log('info'),
      warn: log('warn'),
      error: log('error'),
      child: () => logger,
    };
    this.driver = new ScheduleDriver({
      rules: rulesToDrive,
      scheduler: clockSlotScheduler(this.clock),
      clock: this.clock,
      random: { next: () => this.random.next(), uuid: () => this.random.uuid() },
      logger,
      journal: { getSlotRecord: (id) => this.records.get(id) },
      retryDelayMs: 10_000,
      paused: (id) => this.paused.has(id),
      runSlot: async (rule, slot, signal): Promise<SlotRunResult> => {
        this.runs.push({ slot, at: this.clock.now() });
        this.records.set(rule.id, { ...this.records.get(rule.id), inProgressSlot: slot });
        if (this.runMs > 0) await this.clock.sleep(this.runMs, signal);
        if (this.failNext > 0) {
          this.failNext--;
          throw new Error('ledger unreachable');
        }
        const prev = this.records.get(rule.id)?.lastCompletedSlot ?? slot;
        this.records.set(rule.id, { lastCompletedSlot: Math.max(prev, slot) });
        return {
          ruleId: rule.id,
          slot,
          snapshotOffset: 1,
          resumed: false,
          contracts: 0,
          intents: 1,
          errorCount: 0,
          errors: [],
        };
      },
    });
  }

  slots(): string[] {
    return this.runs.map((r) => new Date(r.slot).toISOString());
  }
}

describe('ScheduleDriver', () => {
  it('runs each slot once, at its time, and nothing before the first slot after start', async () => {
    const h = new Harness([scheduleRule('{ cron: "* * * * *" }')]);
    h.driver.start();
    await h.clock.advance(3 * MINUTE);
    expect(h.slots()).toEqual([
      '2026-01-05T08:01:00.000Z',
      '2026-01-05T08:02:00.000Z',
      '2026-01-05T08:03:00.000Z',
    ]);
    expect(h.runs.map((r) => r.at - r.slot)).toEqual([0, 0, 0]);
    expect(h.driver.stats()[0]).toMatchObject({ slotsRun: 3, skippedOverlap: 0 });
    await h.driver.stop();
    await h.clock.advance(3 * MINUTE);
    expect(h.runs).toHaveLength(3);
  });

  it('skips (counts and logs) a slot that comes due while the previous slot still runs', async () => {
    const h = new Harness([scheduleRule('{ cron: "* * * * *" }')]);
    h.runMs = 90_000;
    h.driver.start();
    await h.clock.advance(4 * MINUTE - 1000);
    // 08:01 runs until 08:02:30; 08:02 is skipped; 08:03 runs until 08:04:30; 08:04 skipped.
    expect(h.slots()).toEqual(['2026-01-05T08:01:00.000Z', '2026-01-05T08:03:00.000Z']);
    expect(h.driver.stats()[0]).toMatchObject({ slotsRun: 1, skippedOverlap: 2, running: true });
    const warns = h.logs.filter((l) => l.level === 'warn');
    expect(warns[0]).toMatchObject({
      fields: { ruleId: 'tick', slot: '2026-01-05T08:02:00.000Z', skipped: 1 },
    });
    // The skipped slot is not caught up later.
    await h.clock.advance(MINUTE);
    expect(h.slots()).not.toContain('2026-01-05T08:02:00.000Z');
    await h.driver.stop();
  });

  it('delays each slot by a jitter below the bound, drawn from the injected Random', async () => {
    const h = new Harness([scheduleRule('{ cron: "* * * * *", jitter: 20s }')]);
    const draws = [0, 0.5, 0.999999];
    h.random = { next: () => draws.shift() ?? 0, uuid: () => '' };
    h.driver.start();
    await h.clock.advance(3 * MINUTE + 25_000);
    expect(h.runs.map((r) => r.at - r.slot)).toEqual([0, 10_000, 19_999]);
    await h.driver.stop();
  });

  it('after 3 days of downtime applies the catch-up policy, then keeps to the schedule', async () => {
    const hourly = (catchUp: string) =>
      scheduleRule(`{ cron: "0 * * * *", catchUp: ${catchUp}, maxCatchUp: 3 }`);
    const down = Date.parse('2026-01-02T08:00:00Z');
    const expected: Record<string, string[]> = {
      none: [],
      last: ['2026-01-05T08:00:00.000Z'],
      all: ['2026-01-05T06:00:00.000Z', '2026-01-05T07:00:00.000Z', '2026-01-05T08:00:00.000Z'],
    };
    for (const policy of ['none', 'last', 'all']) {
      // Back at 08:10 Zurich: the 08:00 slot is 10 minutes old, missed rather than on time.
      const h = new Harness([hourly(policy)], Date.parse('2026-01-05T08:10:00Z'));
      h.records.set('tick', { lastCompletedSlot: down });
      h.driver.start();
      await h.clock.advance(0);
      expect(h.slots(), policy).toEqual(expected[policy]);
      const skipped = 72 - expected[policy]!.length;
      expect(h.driver.stats()[0]!.skippedMisfire, policy).toBe(skipped);
      await h.clock.advance(MINUTE * 60);
      expect(h.slots().at(-1), policy).toBe('2026-01-05T09:00:00.000Z');
      await h.driver.stop();
    }
  });

  it('first resumes a slot a crash left in progress', async () => {
    const h = new Harness([scheduleRule('{ cron: "0 * * * *" }')]);
    const interrupted = Date.parse('2026-01-05T08:00:00Z');
    h.records.set('tick', {
      lastCompletedSlot: interrupted - 3_600_000,
      inProgressSlot: interrupted,
      snapshotOffset: 9,
    });
    h.driver.start();
    await h.clock.advance(0);
    expect(h.slots()).toEqual(['2026-01-05T08:00:00.000Z']);
    expect(h.records.get('tick')).toEqual({ lastCompletedSlot: interrupted });
    await h.driver.stop();
  });

  it('retries a failed slot later; the failure is counted and logged', async () => {
    const h = new Harness([scheduleRule('{ cron: "0 * * * *" }')]);
    h.failNext = 1;
    h.driver.start();
    await h.clock.advance(59 * MINUTE); // to 08:59:30
    expect(h.runs).toEqual([]);
    await h.clock.advance(35_000); // 09:00:05 (the slot ran at 09:00 and failed)
    expect(h.slots()).toEqual(['2026-01-05T09:00:00.000Z']);
    expect(h.driver.stats()[0]).toMatchObject({ slotsFailed: 1, slotsRun: 0 });
    expect(h.logs.some((l) => l.level === 'error' && l.msg === 'schedule slot failed')).toBe(true);
    await h.clock.advance(10_000); // the retry: the store still has it in progress
    expect(h.slots()).toEqual(['2026-01-05T09:00:00.000Z', '2026-01-05T09:00:00.000Z']);
    expect(h.driver.stats()[0]).toMatchObject({ slotsFailed: 1, slotsRun: 1 });
    expect(h.records.get('tick')).toEqual({
      lastCompletedSlot: Date.parse('2026-01-05T09:00:00Z'),
    });
    await h.driver.stop();
  });

  it('ignores event rules and disabled schedule rules; stop aborts a running slot', async () => {
    const disabled = rules(`
version: 1
rules:
  - id: off
    enabled: false
    schedule: { cron: "* * * * *" }
    then:
      - create: { template: "#invoices:Audit:Entry", createArguments: {} }
        actAs: [auditor]
`).rules[0]!;
    const h = new Harness([disabled, scheduleRule('{ cron: "* * * * *" }', 'on')]);
    h.runMs = 10 * MINUTE;
    h.driver.start();
    expect(h.driver.stats().map((s) => s.ruleId)).toEqual(['on']);
    await h.clock.advance(MINUTE);
    expect(h.driver.stats()[0]!.running).toBe(true);
    await h.driver.stop();
    expect(h.driver.stats()[0]).toMatchObject({ running: false, slotsFailed: 0, slotsRun: 0 });
    await h.driver.stop(); // idempotent
  });

  describe('a paused rule', () => {
    const every10 = (catchUp: string) =>
      scheduleRule(`{ cron: "*/10 * * * *", catchUp: ${catchUp}, maxCatchUp: 2 }`);

    it('fires no slot across its due times; resumed, the missed slots go to the catch-up policy', async () => {
      const expected: Record<string, string[]> = {
        // Resumed at 09:05:30: 09:00 is 5.5 minutes old, missed rather than on time.
        none: [],
        last: ['2026-01-05T09:00:00.000Z'],
        all: ['2026-01-05T08:50:00.000Z', '2026-01-05T09:00:00.000Z'],
      };
      for (const policy of ['none', 'last', 'all']) {
        const h = new Harness([every10(policy)]);
        h.driver.start();
        await h.clock.advance(10 * MINUTE); // 08:10:30
        expect(h.slots(), policy).toEqual(['2026-01-05T08:10:00.000Z']);
        h.paused.add('tick');
        await h.clock.advance(55 * MINUTE); // 09:05:30: 08:20 … 09:00 came due while paused
        expect(h.slots(), policy).toEqual(['2026-01-05T08:10:00.000Z']);
        h.paused.delete('tick');
        h.driver.resumed('tick');
        await h.clock.advance(0);
        expect(h.slots().slice(1), policy).toEqual(expected[policy]);
        expect(h.driver.stats()[0]!.skippedMisfire, policy).toBe(5 - expected[policy]!.length);
        // Then on schedule again.
        await h.clock.advance(5 * MINUTE);
        expect(h.slots().at(-1), policy).toBe('2026-01-05T09:10:00.000Z');
        expect(h.runs.at(-1)!.at - h.runs.at(-1)!.slot, policy).toBe(0);
        await h.driver.stop();
      }
    });

    it('resumed within the on-time window, runs the slot that came due while paused at once', async () => {
      const h = new Harness([every10('none')]);
      h.paused.add('tick');
      h.driver.start();
      await h.clock.advance(10 * MINUTE); // 08:10:30: 08:10 came due while paused
      expect(h.runs).toEqual([]);
      h.paused.delete('tick');
      h.driver.resumed('tick');
      await h.clock.advance(0);
      expect(h.slots()).toEqual(['2026-01-05T08:10:00.000Z']);
      expect(h.driver.stats()[0]).toMatchObject({ slotsRun: 1, skippedMisfire: 0 });
      await h.driver.stop();
    });

    it('paused before the driver starts, fires nothing until resumed', async () => {
      const h = new Harness([scheduleRule('{ cron: "* * * * *" }')]);
      h.records.set('tick', { lastCompletedSlot: Date.parse('2026-01-05T07:00:00Z') });
      h.paused.add('tick');
      h.driver.start();
      await h.clock.advance(30 * MINUTE);
      expect(h.runs).toEqual([]);
      expect(h.driver.stats()[0]).toMatchObject({ slotsRun: 0, skippedMisfire: 0 });
      h.paused.delete('tick');
      h.driver.resumed('tick');
      await h.clock.advance(0);
      // catchUp last: the latest of the 90 slots since the last completed one.
      expect(h.slots()).toEqual(['2026-01-05T08:30:00.000Z']);
      expect(h.driver.stats()[0]!.skippedMisfire).toBe(89);
      await h.driver.stop();
    });

    it('lets a running slot finish, and runs no slot whose jitter ends while paused', async () => {
      const h = new Harness([scheduleRule('{ cron: "* * * * *", jitter: 20s }')]);
      h.random = { next: () => 0.5, uuid: () => '' }; // 10 s of jitter
      h.runMs = 30_000;
      h.driver.start();
      await h.clock.advance(MINUTE); // 08:01:30: the 08:01 slot runs from 08:01:10 to 08:01:40
      expect(h.driver.stats()[0]!.running).toBe(true);
      h.paused.add('tick');
      await h.clock.advance(MINUTE); // 08:02:30: 08:01 done at 08:01:40, 08:02 not run
      expect(h.records.get('tick')).toEqual({
        lastCompletedSlot: Date.parse('2026-01-05T08:01:00Z'),
      });
      expect(h.slots()).toEqual(['2026-01-05T08:01:00.000Z']);
      // Resumed at 08:02:30: the missed 08:02 is waiting out its jitter when paused again.
      h.paused.delete('tick');
      h.driver.resumed('tick');
      await h.clock.advance(5_000);
      h.paused.add('tick');
      await h.clock.advance(2 * MINUTE);
      expect(h.slots()).toEqual(['2026-01-05T08:01:00.000Z']);
      expect(h.logs.some((l) => l.msg === 'schedule slot not run: the rule is paused')).toBe(true);
      h.paused.delete('tick');
      h.driver.resumed('tick');
      await h.clock.advance(15_000);
      expect(h.slots()).toEqual(['2026-01-05T08:01:00.000Z', '2026-01-05T08:04:00.000Z']);
      await h.driver.stop();
    });
  });
});
