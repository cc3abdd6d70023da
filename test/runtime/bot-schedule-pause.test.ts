import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SQLITE_STORE_FILE } from '../../src/store/open-sqlite-store.js';
import type { BotOptions } from '../../src/runtime/bot.js';
import { clockSlotScheduler, type SlotScheduler } from '../../src/schedule/slot-scheduler.js';
import {
  ACCEPT_RULES,
  botFixture,
  checkpointAt,
  NOTE_RULES,
  recordingLogger,
  rules,
  type BotFixture,
} from './bot-fixture.js';

// A paused schedule rule fires no slot (issue 18): on a single bot (pauseRule) and when the bot
// starts it paused (BotOptions.pausedAtStart, a fleet member's rule paused fleet-wide). Resumed,
// the slots it missed go to its catch-up policy, as after downtime.

const MINUTE = 60_000;

let f: BotFixture | undefined;
afterEach(async () => {
  await f?.cleanup();
  f = undefined;
});

/** A bot over the note rule whose schedule is woken by the fixture's fake clock. */
function noteBot(more: Partial<BotOptions> = {}): BotFixture {
  const scheduler: SlotScheduler = {
    watch: (trigger, wake) => clockSlotScheduler(f!.clock).watch(trigger, wake),
  };
  f = botFixture({ rules: rules(NOTE_RULES), schedule: { scheduler }, ...more });
  return f;
}

/** How many slots had their intent submitted (one per slot; resubmissions keep the commandId). */
function slotsRun(fx: BotFixture): number {
  return new Set(fx.ledger.submits.map((s) => s.commandId)).size;
}

describe('the bot, unit: a paused schedule rule', () => {
  it('fires no slot while paused; resumed, runs the latest missed slot (catchUp: last)', async () => {
    const fx = noteBot();
    await fx.bot.start(); // 09:00:00
    await fx.clock.advance(MINUTE);
    await fx.settle();
    expect(slotsRun(fx)).toBe(1); // 09:01
    expect(fx.bot.pauseRule('note').state).toBe('paused');
    await fx.clock.advance(5 * MINUTE + 30_000); // 09:06:30: 09:02 … 09:06 came due
    await fx.settle();
    expect(slotsRun(fx)).toBe(1);
    expect(fx.bot.schedules?.stats()[0]).toMatchObject({ slotsRun: 1, skippedMisfire: 0 });
    fx.bot.resumeRule('note');
    await fx.settle();
    expect(slotsRun(fx)).toBe(2);
    expect(fx.bot.schedules?.stats()[0]).toMatchObject({
      slotsRun: 2,
      skippedMisfire: 4,
      lastSlot: Date.parse('2026-01-05T09:06:00Z'),
    });
    await fx.clock.advance(MINUTE);
    await fx.settle();
    expect(slotsRun(fx)).toBe(3); // 09:07, on schedule again
  });

  it('started with the rule paused (pausedAtStart), fires nothing until it is resumed', async () => {
    const fx = noteBot({ pausedAtStart: ['note'] });
    await fx.bot.start();
    expect(fx.bot.ruleStatus()[0]?.state).toBe('paused');
    await fx.clock.advance(3 * MINUTE);
    await fx.settle();
    expect(slotsRun(fx)).toBe(0);
    fx.bot.resumeRule('note');
    await fx.settle();
    expect(slotsRun(fx)).toBe(1);
    expect(fx.bot.schedules?.stats()[0]).toMatchObject({
      slotsRun: 1,
      skippedMisfire: 2,
      lastSlot: Date.parse('2026-01-05T09:03:00Z'),
    });
  });

  it('holds no checkpoint (it reads no events) and, resumed, is active at once with nothing to replay', async () => {
    const scheduler: SlotScheduler = {
      watch: (trigger, wake) => clockSlotScheduler(f!.clock).watch(trigger, wake),
    };
    const both = `${ACCEPT_RULES}${NOTE_RULES.slice(NOTE_RULES.indexOf('  - id: note'))}`;
    const fx = (f = botFixture({ rules: rules(both), schedule: { scheduler } }));
    fx.ledger.end = 10;
    await fx.bot.start();
    expect(fx.bot.pauseRule('note')).toMatchObject({ state: 'paused', pausedAtOffset: 10 });
    fx.ledger.updateQueue.push(checkpointAt(12));
    await fx.settle();
    // The stream goes on, and the checkpoint with it: a restart (or a fleet's
    // rows) does not go back to where the schedule rule was paused.
    expect(fx.bot.checkpoint()).toBe(12);
    const resumed: string[] = [];
    fx.bot.events.on('resumed', (id) => resumed.push(id));
    const streams = fx.ledger.updateStreams.length;
    expect(fx.bot.resumeRule('note').state).toBe('active');
    await fx.settle();
    expect(resumed).toEqual(['note']);
    expect(fx.ledger.updateStreams.length).toBe(streams); // no replay stream
    expect(fx.bot.checkpoint()).toBe(12);
  });
});

describe('the bot, unit: a schedule slot on a store that refuses writes', () => {
  it('fails the bot instead of retrying the slot for ever, and says why', async () => {
    const log = recordingLogger();
    const fx = noteBot({ logger: log });
    await fx.bot.start();
    // The disk is full, say: from now on the journal's log cannot take a row.
    const db = new Database(join(fx.dir, SQLITE_STORE_FILE));
    db.exec(
      `CREATE TRIGGER full BEFORE INSERT ON intent_log BEGIN SELECT RAISE(ABORT, 'disk full'); END`,
    );
    db.close();
    await fx.clock.advance(MINUTE);
    await fx.settle();
    await fx.bot.done;
    expect(fx.bot.state).toBe('failed');
    expect(fx.bot.error).toMatchObject({ message: 'disk full' });
    expect(log.lines.some((l) => l.level === 'error' && l.msg === 'bot failed')).toBe(true);
  });
});
