import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { SeededRandom } from '../../src/core/seeded-random.js';
import type { SlotScheduler } from '../../src/schedule/slot-scheduler.js';
import { SwappableSchedules } from '../../src/runtime/bot-schedules.js';
import { RecentIntents } from '../../src/runtime/recent-intents.js';
import { storedLimits } from '../../src/runtime/stored-payload.js';
import { decodeSubmissionPayload } from '../../src/runtime/submission-payload.js';
import type { IntentEvent } from '../../src/runtime/submission-tracker.js';
import { RateLimits } from '../../src/runtime/token-bucket.js';
import type { IntentRecord, IntentState } from '../../src/store/store.js';
import { ACCEPT_RULES, PARTIES, rules } from './bot-fixture.js';
import { FakeLedger } from './fake-ledger.js';
import { payload } from './tracker-fixture.js';

function event(commandId: string, to: IntentState, lastError?: unknown): IntentEvent {
  const record = {
    commandId,
    ruleId: 'accept',
    state: to,
    attempts: 1,
    offset: 3,
    updatedAt: 7,
    ...(lastError === undefined ? {} : { lastError }),
  } as unknown as IntentRecord;
  return { commandId, ruleId: 'accept', from: null, to, record };
}

describe('RecentIntents', () => {
  it('keeps the latest state per intent, newest first, at most `limit`', () => {
    const recent = new RecentIntents(2);
    recent.note(event('a', 'pending'));
    recent.note(event('b', 'pending'));
    recent.note(event('a', 'dead-lettered', { code: 'X', message: 'no' }));
    expect(recent.list().map((s) => [s.commandId, s.state])).toEqual([
      ['a', 'dead-lettered'],
      ['b', 'pending'],
    ]);
    expect(recent.list()[0]?.error).toEqual({ code: 'X', message: 'no' });
    recent.note(event('c', 'pending'));
    expect(recent.list().map((s) => s.commandId)).toEqual(['c', 'a']);
  });
});

describe('RateLimits', () => {
  it("one bucket per rule, with the rule's current limit, else the recorded one; forget starts afresh", () => {
    const clock = new FakeClock(0);
    let current: { perSecond: number; burst: number } | undefined = { perSecond: 1, burst: 3 };
    const limits = new RateLimits(clock, () => current);
    const bucket = limits.bucket('r', { perSecond: 100, burst: 100 });
    expect(bucket.available).toBe(3);
    expect(limits.bucket('r', { perSecond: 100, burst: 100 })).toBe(bucket);
    current = undefined;
    limits.forget(['r']);
    expect(limits.bucket('r', { perSecond: 100, burst: 50 }).available).toBe(50);
  });
});

describe('storedLimits', () => {
  it("reads a decoded payload's concurrency and deadline; neutral values for an unusable one", () => {
    expect(storedLimits(payload({ concurrency: 3 }))).toEqual({
      concurrency: 3,
      deadlineMs: 600_000,
    });
    const unusable = [decodeSubmissionPayload({ version: 99 }), decodeSubmissionPayload(null)];
    for (const p of unusable) {
      expect(storedLimits(p)).toEqual({ concurrency: 1, deadlineMs: undefined });
    }
  });
});

describe('SwappableSchedules', () => {
  const NIGHTLY = `${ACCEPT_RULES}  - id: nightly
    schedule: { cron: '0 2 * * *' }
    then:
      - create: { template: '#invoices:Invoice:Note', createArguments: { owner: '\${{ parties.payer }}' } }
        actAs: [payer]
`;

  function schedules(live: { value: boolean }, drive = true) {
    /** The cron text of each trigger being watched. */
    const watching: string[] = [];
    const scheduler: SlotScheduler = {
      watch: (trigger) => {
        watching.push(trigger.cron);
        return { stop: () => watching.splice(watching.indexOf(trigger.cron), 1) };
      },
    };
    const s = new SwappableSchedules({
      rules: rules(NIGHTLY),
      parties: PARTIES,
      ledger: new FakeLedger(),
      journal: { getSlotRecord: () => undefined, beginSlot: () => ({}), completeSlot: () => ({}) },
      sink: { submitIntents: () => Promise.resolve() },
      clock: new FakeClock(Date.UTC(2026, 0, 5, 9)),
      random: new SeededRandom(1),
      logger: silentLogger,
      options: { scheduler },
      drive,
      live: () => live.value,
    });
    return { s, watching };
  }

  const settleSwaps = async (): Promise<void> => {
    for (let i = 0; i < 10; i++) await Promise.resolve();
  };

  it('swaps a running driver for one with the new rules, one swap at a time', async () => {
    const live = { value: false };
    const { s, watching } = schedules(live);
    const first = s.driver;
    expect(first).toBeDefined();
    live.value = true;
    s.start();
    expect(watching).toEqual(['0 2 * * *']);
    s.swap(rules(NIGHTLY.replace('0 2 * * *', '0 3 * * *')));
    await settleSwaps();
    expect(s.driver).not.toBe(first);
    expect(watching).toEqual(['0 3 * * *']);
    await s.stop();
    expect(watching).toEqual([]);
    s.swap(rules(ACCEPT_RULES));
    await s.stop();
    expect(s.driver).toBeUndefined();
  });

  it('before start a swap only replaces the driver; drive: false makes none', () => {
    const { s, watching } = schedules({ value: false });
    s.swap(rules(NIGHTLY.replace('0 2 * * *', '0 4 * * *')));
    expect(watching).toEqual([]);
    expect(s.driver).toBeDefined();
    expect(schedules({ value: false }, false).s.driver).toBeUndefined();
  });
});
