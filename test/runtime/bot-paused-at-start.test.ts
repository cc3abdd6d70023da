import { afterEach, describe, expect, it } from 'vitest';
import type { Bot } from '../../src/runtime/bot.js';
import {
  botFixture,
  checkpointAt,
  invoiceCreated,
  recordingLogger,
  rules,
  type BotFixture,
  REMIND_RULES,
  choices,
} from './bot-fixture.js';
import { completionOf } from './tracker-fixture.js';

// BotOptions.pausedAtStart: what a fleet member passes for the rules paused fleet-wide, so that a
// new owner of a paused rule (a take-over, a rebalance, a restart) evaluates none of the events
// that came during the pause until the rule is resumed.

let f: BotFixture | undefined;
afterEach(async () => {
  await f?.cleanup();
  f = undefined;
});

function complete(fx: BotFixture, index: number, offset: number): void {
  fx.ledger.completionQueue.push({
    kind: 'completion',
    offset,
    completion: completionOf(fx.ledger.submits[index]!, offset),
  });
}

async function stop(fx: BotFixture, bot: Bot): Promise<void> {
  const stopping = bot.stop();
  await fx.clock.advance(10_000);
  await stopping;
}

describe('the bot, unit: rules paused at start', () => {
  it('pauses them at its stored checkpoint before the stream opens, holds it across a restart, and a resume replays the paused events', async () => {
    f = botFixture({ rules: rules(REMIND_RULES), closeStore: false });
    f.ledger.end = 7;
    await f.bot.start(); // the first run stores its checkpoint at the ledger end, 7
    await stop(f, f.bot);
    expect(f.store.checkpoint()).toBe(7);

    f.ledger.end = 10;
    const logger = recordingLogger();
    const paused = f.restart({ pausedAtStart: ['remind', 'no-such-rule'], logger });
    await paused.start();
    await f.settle();
    expect(paused.ruleStatus().map((r) => [r.id, r.state, r.pausedAtOffset])).toEqual([
      ['accept', 'active', undefined],
      ['remind', 'paused', 7],
    ]);
    expect(logger.lines.find((l) => l.msg === 'rules paused at start')?.fields).toMatchObject({
      ruleIds: ['remind'],
      offset: 7,
    });
    // The first event the stream brings is evaluated without the paused rule.
    expect(f.ledger.updateStreams[1]?.request.beginExclusive).toBe(7);
    f.ledger.updateQueue.push(invoiceCreated(8), checkpointAt(9));
    await f.settle();
    expect(choices(f)).toEqual(['Accept']);
    complete(f, 0, 11);
    await f.settle();
    expect(f.store.checkpoint()).toBe(7); // held for the paused rule
    await stop(f, paused);
    expect(f.store.checkpoint()).toBe(7); // and at the stop

    // Restarted paused (a new owner): from the held checkpoint, the rule still skipped.
    const again = f.restart({ pausedAtStart: ['remind'] });
    await again.start();
    await f.settle();
    expect(f.ledger.updateStreams[2]?.request.beginExclusive).toBe(7);
    f.ledger.updateQueue.push(invoiceCreated(8), checkpointAt(9));
    await f.settle();
    expect(choices(f)).toEqual(['Accept']); // accept's intent of 8 is in the journal already

    // Resumed: the paused events are read again for that rule alone, once.
    expect(again.resumeRule('remind')).toMatchObject({ state: 'resuming', pausedAtOffset: 7 });
    await f.settle();
    const replay = f.ledger.updateStreams[3]!;
    expect(replay.request).toMatchObject({ beginExclusive: 7, endInclusive: 9 });
    replay.queue.push(invoiceCreated(8), checkpointAt(9));
    replay.queue.end();
    await f.settle();
    expect(choices(f)).toEqual(['Accept', 'Remind']);
    expect(again.ruleStatus().map((r) => r.state)).toEqual(['active', 'active']);
    complete(f, 1, 12);
    await f.settle();
    expect(f.store.checkpoint()).toBe(9);
    await stop(f, again);
  });

  it('does not pause a rule disabled in its file: nothing holds the checkpoint', async () => {
    const text = `${REMIND_RULES}    enabled: false\n`;
    f = botFixture({ rules: rules(text), pausedAtStart: ['remind'] });
    f.ledger.end = 3;
    await f.bot.start();
    expect(f.bot.ruleStatus().map((r) => [r.id, r.state])).toEqual([
      ['accept', 'active'],
      ['remind', 'disabled'],
    ]);
    f.ledger.updateQueue.push(checkpointAt(5));
    await f.settle();
    expect(f.store.checkpoint()).toBe(5);
  });
});
