import { afterEach, describe, expect, it } from 'vitest';
import type { Bot } from '../../src/runtime/bot.js';
import {
  botFixture,
  checkpointAt,
  invoiceCreated,
  rules,
  type BotFixture,
  REMIND_RULES,
} from './bot-fixture.js';

// BotOptions.ruleCheckpoints: a fleet member's bot begins at the lowest checkpoint of its rules,
// and each rule evaluates only the events after its own (issue 18): a rule whose history begins
// further on (new to the fleet, or added back by a reload) acts on nothing before it.

let f: BotFixture | undefined;
afterEach(async () => {
  await f?.cleanup();
  f = undefined;
});

/** Each submission as `choice@contract`. */
function acted(fx: BotFixture): string[] {
  return fx.ledger.submits.map((s) => {
    const c = s.commands[0] as { ExerciseCommand?: { choice: string; contractId: string } };
    return `${c.ExerciseCommand?.choice ?? '?'}@${c.ExerciseCommand?.contractId ?? '?'}`;
  });
}

async function stop(fx: BotFixture, bot: Bot): Promise<void> {
  const stopping = bot.stop();
  await fx.clock.advance(10_000);
  await stopping;
}

/** A stored checkpoint of 4, where the bot begins. */
async function storedAt4(fx: BotFixture): Promise<void> {
  fx.ledger.end = 4;
  await fx.bot.start();
  await stop(fx, fx.bot);
  expect(fx.store.checkpoint()).toBe(4);
}

describe('the bot, unit: each rule from its own checkpoint', () => {
  it('begins at the stored checkpoint; a rule whose own is further on skips the events up to it', async () => {
    f = botFixture({ rules: rules(REMIND_RULES), closeStore: false });
    await storedAt4(f);
    f.ledger.end = 12;
    const bot = f.restart({
      ruleCheckpoints: () => Promise.resolve(new Map([['remind', 7]])),
    });
    await bot.start();
    await f.settle();
    expect(f.ledger.updateStreams[1]?.request.beginExclusive).toBe(4);
    f.ledger.updateQueue.push(invoiceCreated(6), invoiceCreated(7), invoiceCreated(8));
    await f.settle();
    expect(acted(f)).toEqual([
      'Accept@00inv6',
      'Accept@00inv7',
      'Accept@00inv8',
      'Remind@00inv8', // remind's own checkpoint is 7: 6 and 7 are not its events
    ]);
    // Past every rule's own checkpoint the floors are gone: both rules, as without them.
    f.ledger.updateQueue.push(checkpointAt(9), invoiceCreated(10));
    await f.settle();
    expect(acted(f).slice(4)).toEqual(['Accept@00inv10', 'Remind@00inv10']);
    await stop(f, bot);
  });

  it('pauses a rule at its own checkpoint, so a resume does not replay the events before it', async () => {
    f = botFixture({ rules: rules(REMIND_RULES), closeStore: false });
    await storedAt4(f);
    f.ledger.end = 12;
    const bot = f.restart({
      pausedAtStart: ['remind'],
      ruleCheckpoints: () => Promise.resolve(new Map([['remind', 7]])),
    });
    await bot.start();
    await f.settle();
    expect(bot.ruleStatus().map((r) => [r.id, r.state, r.pausedAtOffset])).toEqual([
      ['accept', 'active', undefined],
      ['remind', 'paused', 7],
    ]);
    f.ledger.updateQueue.push(invoiceCreated(6), invoiceCreated(8), checkpointAt(9));
    await f.settle();
    expect(acted(f)).toEqual(['Accept@00inv6', 'Accept@00inv8']);
    bot.resumeRule('remind');
    await f.settle();
    const replay = f.ledger.updateStreams[2]!;
    expect(replay.request).toMatchObject({ beginExclusive: 7, endInclusive: 9 });
    replay.queue.push(invoiceCreated(8), checkpointAt(9));
    replay.queue.end();
    await f.settle();
    expect(acted(f)).toEqual(['Accept@00inv6', 'Accept@00inv8', 'Remind@00inv8']);
    await stop(f, bot);
  });
});
