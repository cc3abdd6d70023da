import { afterEach, describe, expect, it } from 'vitest';
import type { Intent } from '../../src/rules/evaluation-result.js';
import type { SlotScheduler } from '../../src/schedule/slot-scheduler.js';
import type { RuleSetDiff } from '../../src/runtime/rule-set-diff.js';
import {
  ACCEPT_RULES,
  botFixture,
  checkpointAt,
  invoiceCreated,
  ISSUER,
  PAYER,
  recordingLogger,
  rules,
  SETTLE_RULE,
  type BotFixture,
  REMIND_RULES,
  choices,
} from './bot-fixture.js';
import { completionOf } from './tracker-fixture.js';

let f: BotFixture | undefined;
afterEach(async () => {
  await f?.cleanup();
  f = undefined;
});

describe('the bot, unit: rule control, reload, shadow, dead letters, stop', () => {
  it('pause holds the checkpoint and skips the rule; resume replays its paused events, then releases the hold', async () => {
    f = botFixture({ rules: rules(REMIND_RULES) });
    f.ledger.end = 10;
    await f.bot.start();
    expect(f.bot.pauseRule('remind')).toMatchObject({ state: 'paused', pausedAtOffset: 10 });
    f.ledger.updateQueue.push(invoiceCreated(11), checkpointAt(12));
    await f.settle();
    expect(choices(f)).toEqual(['Accept']);
    f.ledger.completionQueue.push({
      kind: 'completion',
      offset: 13,
      completion: completionOf(f.ledger.submits[0]!, 13),
    });
    await f.settle();
    expect(f.store.checkpoint()).toBe(10); // held for the paused rule

    const resumed: string[] = [];
    f.bot.events.on('resumed', (id) => resumed.push(id));
    expect(f.bot.resumeRule('remind').state).toBe('resuming');
    await f.settle();
    const replay = f.ledger.updateStreams[1]!;
    expect(replay.request).toMatchObject({ beginExclusive: 10, endInclusive: 12 });
    replay.queue.push(invoiceCreated(11), checkpointAt(12));
    replay.queue.end();
    await f.settle();
    // Only the paused rule fires on the replay: accept's intent of 11 is not recorded again.
    expect(choices(f)).toEqual(['Accept', 'Remind']);
    expect(resumed).toEqual(['remind']);
    expect(f.bot.ruleStatus().map((r) => [r.id, r.state])).toEqual([
      ['accept', 'active'],
      ['remind', 'active'],
    ]);
    f.ledger.completionQueue.push({
      kind: 'completion',
      offset: 14,
      completion: completionOf(f.ledger.submits[1]!, 14),
    });
    await f.settle();
    expect(f.store.checkpoint()).toBe(12);
  });

  it('reload with a new filter resubscribes after the last offset, and new acting parties reopen the completions', async () => {
    f = botFixture();
    f.ledger.end = 10;
    await f.bot.start();
    f.ledger.updateQueue.push(checkpointAt(11));
    await f.settle();
    const diffs: RuleSetDiff[] = [];
    f.bot.events.on('reload', (d) => diffs.push(d));
    const diff = f.bot.reloadRules(rules(`${ACCEPT_RULES}${SETTLE_RULE}`));
    expect(diffs).toEqual([diff]);
    await f.settle();
    expect(f.ledger.updateStreams.map((s) => s.request.beginExclusive)).toEqual([10, 11]);
    expect(
      f.ledger.updateStreams[1]!.request.updateFormat.includeTransactions?.transactionShape,
    ).toBe('TRANSACTION_SHAPE_LEDGER_EFFECTS');
    expect(f.ledger.completionStreams.map((s) => s.request.parties)).toEqual([
      [PAYER],
      [ISSUER, PAYER].sort(),
    ]);
    expect(f.bot.plan.readParties).toEqual([ISSUER, PAYER].sort());
  });

  it('shadow: evaluates and emits intents, submits nothing, writes nothing, follows no completions', async () => {
    const logger = recordingLogger();
    f = botFixture({ shadow: true, logger });
    f.ledger.end = 10;
    const shadowed: Intent[] = [];
    f.bot.events.on('shadow-intent', (i) => shadowed.push(i));
    await f.bot.start();
    f.ledger.updateQueue.push(invoiceCreated(11), checkpointAt(12));
    await f.settle();
    expect(shadowed.map((i) => i.offset)).toEqual([11]);
    expect(f.bot.metrics.shadowIntents).toBe(1);
    expect(f.bot.processedOffset()).toBe(12);
    expect(f.ledger.submits).toEqual([]);
    expect(f.ledger.completionStreams).toEqual([]);
    expect(f.store.listIntents()).toEqual([]);
    expect(f.store.checkpoint()).toBeUndefined();
    expect(logger.lines.find((l) => l.msg === 'bot starting')?.fields).toMatchObject({
      shadow: true,
    });
    expect(() => f!.bot.retryDeadLetter('lb-x')).toThrow(
      expect.objectContaining({ code: 'SHADOW' }),
    );
  });

  it('retries a dead letter: back to pending and submitted again under the same commandId', async () => {
    f = botFixture();
    f.ledger.end = 10;
    await f.bot.start();
    f.ledger.updateQueue.push(invoiceCreated(11));
    await f.settle();
    const first = f.ledger.submits[0]!;
    f.ledger.completionQueue.push({
      kind: 'completion',
      offset: 12,
      completion: completionOf(first, 12, {
        code: 'DAML_AUTHORIZATION_ERROR',
        category: 8,
        grpc: 7,
        cause: 'not authorized',
        definiteAnswer: true,
      }),
    });
    await f.settle();
    expect(f.store.getIntent(first.commandId)?.state).toBe('dead-lettered');
    expect(() => f!.bot.retryDeadLetter('lb-nope')).toThrow(
      expect.objectContaining({ code: 'NOT_DEAD_LETTERED' }),
    );
    expect(f.bot.retryDeadLetter(first.commandId)).toMatchObject({ state: 'pending' });
    await f.settle();
    expect(f.ledger.submits).toHaveLength(2);
    expect(f.ledger.submits[1]!.commandId).toBe(first.commandId);
    expect(f.bot.recentIntents()[0]).toMatchObject({
      commandId: first.commandId,
      state: 'submitted',
    });
    const stopping = f.bot.stop();
    await f.clock.advance(60_000);
    await stopping;
    expect(() => f!.bot.retryDeadLetter(first.commandId)).toThrow(
      expect.objectContaining({ code: 'NOT_RUNNING' }),
    );
  });

  it('stop runs every cleanup step: one that throws is logged, and the store still closes', async () => {
    const logger = recordingLogger();
    const scheduler: SlotScheduler = {
      watch: () => ({
        stop: () => {
          throw new Error('the scheduler will not stop');
        },
      }),
    };
    f = botFixture({
      logger,
      rules: rules(`${ACCEPT_RULES}  - id: nightly
    schedule: { cron: '0 2 * * *' }
    then:
      - create: { template: '#invoices:Invoice:Note', createArguments: { owner: '\${{ parties.payer }}' } }
        actAs: [payer]
`),
      schedule: { scheduler },
    });
    await f.bot.start();
    expect(f.bot.schedules).toBeDefined();
    const stopping = f.bot.stop();
    await f.clock.advance(60_000);
    await stopping;
    expect(f.bot.state).toBe('stopped');
    expect(logger.lines.find((l) => l.msg === 'cleanup step failed')?.fields).toMatchObject({
      step: 'schedules',
      error: 'the scheduler will not stop',
    });
    expect(f.bot.checkpoint()).toBeUndefined(); // closed
    expect(() => f!.store.checkpoint()).toThrow();
  });
});
