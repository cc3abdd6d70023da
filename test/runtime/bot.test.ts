import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Completion } from '../../src/ledger/wire/wire-types.js';
import type { BotState } from '../../src/runtime/bot.js';
import { RuntimeError } from '../../src/runtime/runtime-error.js';
import { createBot } from '../../src/runtime/bot.js';
import type { JsGetActiveContractsResponse } from '../../src/ledger/wire/wire-types.js';
import { commandIdFor } from '../../src/rules/command-id.js';
import { SQLITE_STORE_FILE } from '../../src/store/open-sqlite-store.js';
import { apiError } from './fake-ledger.js';
import {
  ACCEPT_RULES,
  botFixture,
  checkpointAt,
  FAILING_ACCEPT_RULES,
  invoiceCreated,
  PARTIES,
  PAYER,
  recordingLogger,
  rules,
  SETTLE_RULE,
  type BotFixture,
} from './bot-fixture.js';
import { completionOf } from './tracker-fixture.js';

let f: BotFixture | undefined;
afterEach(async () => {
  await f?.cleanup();
  f = undefined;
});

function createdEventOf(offset: number, args: Record<string, unknown> = {}) {
  const element = invoiceCreated(offset, args);
  if (element.kind !== 'transaction') throw new Error('not a transaction');
  const event = element.transaction.events[0];
  if (event === undefined || !('CreatedEvent' in event)) throw new Error('not a creation');
  return event.CreatedEvent;
}

/** The invoice `invoiceCreated(offset)` creates, as an element of the active contract set. */
function activeContract(
  offset: number,
  args: Record<string, unknown> = {},
): JsGetActiveContractsResponse {
  return {
    workflowId: '',
    contractEntry: {
      JsActiveContract: {
        createdEvent: createdEventOf(offset, args),
        synchronizerId: 'sync::1220ef',
        reassignmentCounter: 0,
      },
    },
  };
}

function complete(
  fx: BotFixture,
  n: number,
  offset: number,
  failure?: Parameters<typeof completionOf>[2],
): void {
  const submitted = fx.ledger.submits[n];
  if (submitted === undefined) throw new Error(`no submission #${n}`);
  const completion: Completion = completionOf(submitted, offset, failure);
  fx.ledger.completionQueue.push({ kind: 'completion', offset, completion });
}

describe('createBot', () => {
  it('subscribes with one filter from the rules and completions for the acting parties', async () => {
    f = botFixture();
    f.ledger.end = 10;
    await f.bot.start();
    expect(f.bot.state).toBe('running');
    const [updates] = f.ledger.updateStreams;
    expect(updates?.request.beginExclusive).toBe(10);
    expect(updates?.request.updateFormat).toEqual({
      includeTransactions: {
        eventFormat: {
          filtersByParty: {
            [PAYER]: {
              cumulative: [
                {
                  identifierFilter: {
                    TemplateFilter: {
                      value: {
                        templateId: '#invoices:Invoice:Invoice',
                        includeCreatedEventBlob: false,
                      },
                    },
                  },
                },
              ],
            },
          },
          verbose: true,
        },
        transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA',
      },
    });
    expect(f.ledger.completionStreams[0]?.request).toEqual({
      userId: 'ledgerbot',
      parties: [PAYER],
      beginExclusive: 10,
    });
  });

  it('uses LEDGER_EFFECTS when a rule watches exercises', () => {
    const bot = createBot({
      rules: rules(`version: 1
rules:
${SETTLE_RULE}`),
      parties: PARTIES,
      userId: 'u',
      ledger: {} as never,
      store: {} as never,
    });
    expect(bot.plan.shape).toBe('TRANSACTION_SHAPE_LEDGER_EFFECTS');
    expect(bot.plan.readParties).toEqual([PARTIES.issuer]);
  });

  it('records intents write-ahead, submits them and holds the checkpoint until they are terminal', async () => {
    f = botFixture();
    f.ledger.end = 10;
    await f.bot.start();
    f.ledger.updateQueue.push(
      invoiceCreated(11),
      invoiceCreated(12, {}, 'Invoice:Other'),
      invoiceCreated(13, { currency: 'EUR' }),
      checkpointAt(14),
    );
    await f.settle();
    expect(f.bot.metrics.lastOffset).toBe(14);
    expect(f.ledger.submits).toHaveLength(1);
    expect(f.ledger.submits[0]).toMatchObject({
      actAs: [PAYER],
      workflowId: 'accept',
      deduplicationPeriod: { DeduplicationOffset: { value: 11 } },
      commands: [{ ExerciseCommand: { contractId: '00inv11', choice: 'Accept' } }],
    });
    // The intent of offset 11 is open: the checkpoint stays below it.
    expect(f.store.checkpoint()).toBe(10);
    complete(f, 0, 15);
    await f.settle();
    expect(f.store.getIntent(f.ledger.submits[0]!.commandId)?.state).toBe('succeeded');
    expect(f.store.checkpoint()).toBe(14);
    expect(f.bot.metrics.snapshot()).toMatchObject({
      transactionsSeen: 3,
      eventsSeen: 3,
      intentsRecorded: 1,
      submissions: 1,
      inFlight: 0,
      intentTransitions: { pending: 1, submitted: 1, succeeded: 1 },
    });
  });

  it('compacts the journal while it runs: a finished intent goes once it is older than the retention', async () => {
    f = botFixture({ retentionMs: 3600_000 });
    f.ledger.end = 10;
    await f.bot.start();
    f.ledger.updateQueue.push(invoiceCreated(11), checkpointAt(12));
    await f.settle();
    const commandId = f.ledger.submits[0]!.commandId;
    complete(f, 0, 13);
    await f.settle();
    expect(f.store.getIntent(commandId)?.state).toBe('succeeded');
    // Runs every 15 minutes (a quarter of the window): the first run past an hour deletes it.
    await f.clock.advance(45 * 60_000);
    expect(f.store.getIntent(commandId)).toBeDefined();
    await f.clock.advance(30 * 60_000);
    expect(f.store.getIntent(commandId)).toBeUndefined();
    expect(f.bot.metrics.snapshot().compactedIntents).toBe(1);
  });

  it('pauses ingestion when maxInFlight is reached: nothing is read beyond the bound', async () => {
    f = botFixture({ submission: { maxInFlight: 2, completionTimeoutMs: 60_000 } });
    await f.bot.start();
    const queue = f.ledger.updateQueue;
    queue.push(...[1, 2, 3, 4, 5, 6].map((o) => invoiceCreated(o)));
    await f.settle();
    expect(f.ledger.submits).toHaveLength(2);
    // The third transaction was read; its intent waits for a place before it is recorded, and
    // the loop pulls nothing more meanwhile.
    expect(queue.pulled).toBe(3);
    expect(queue.buffered).toBe(3);
    expect(f.bot.metrics.waitingForAdmission).toBe(1);
    expect(f.bot.metrics.inFlight).toBe(2);
    expect(f.store.countByState().pending).toBe(0);
    expect(f.store.listIntents()).toHaveLength(2);
    await f.clock.advance(10_000);
    expect(queue.pulled).toBe(3);
    complete(f, 0, 7);
    await f.settle();
    expect(f.ledger.submits).toHaveLength(3);
    expect(queue.pulled).toBe(4);
  });

  it('records an intent that waited for a place with its first attempt: one journal row', async () => {
    // Group commit as `ledgerbot run` has it: the changes of an event-loop turn commit together.
    f = botFixture(
      { submission: { maxInFlight: 1, completionTimeoutMs: 60_000 } },
      { groupCommit: true },
    );
    const fx = f;
    const settled = async (submits: number): Promise<void> => {
      for (let i = 0; i < 20 && fx.ledger.submits.length < submits; i++) {
        await fx.settle();
        await new Promise((r) => setImmediate(r));
      }
      expect(fx.ledger.submits).toHaveLength(submits);
    };
    await f.bot.start();
    f.ledger.updateQueue.push(invoiceCreated(1), invoiceCreated(2));
    await settled(1);
    complete(f, 0, 3);
    await settled(2);
    const second = f.ledger.submits[1]!.commandId;
    const db = new Database(join(f.dir, SQLITE_STORE_FILE), { readonly: true });
    try {
      const rows = db
        .prepare('SELECT state FROM intent_log WHERE command_id = ? ORDER BY seq')
        .all(second) as { state: string }[];
      // Recorded and submitted in one turn, so in one row (it was two while intents were
      // recorded before they waited).
      expect(rows.map((r) => r.state)).toEqual(['submitted']);
    } finally {
      db.close();
    }
  });

  it('honours the per-rule concurrency bound', async () => {
    f = botFixture({
      rules: rules(
        `version: 1
rules:
  - id: accept
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    then:
      - exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Accept }
        actAs: [payer]
    concurrency: 1
`,
      ),
    });
    await f.bot.start();
    f.ledger.updateQueue.push(invoiceCreated(1), invoiceCreated(2));
    await f.settle();
    expect(f.ledger.submits).toHaveLength(1);
    complete(f, 0, 3);
    await f.settle();
    expect(f.ledger.submits).toHaveLength(2);
  });

  it('rate-limits submissions per rule on the injected clock', async () => {
    f = botFixture({
      rules: rules(
        `version: 1
rules:
  - id: accept
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    then:
      - exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Accept }
        actAs: [payer]
    rateLimit: { perSecond: 2, burst: 1 }
`,
      ),
    });
    await f.bot.start();
    f.ledger.updateQueue.push(invoiceCreated(1), invoiceCreated(2), invoiceCreated(3));
    await f.settle();
    expect(f.ledger.submits).toHaveLength(1);
    await f.clock.advance(499);
    expect(f.ledger.submits).toHaveLength(1);
    await f.clock.advance(1);
    expect(f.ledger.submits).toHaveLength(2);
    await f.clock.advance(500);
    expect(f.ledger.submits).toHaveLength(3);
  });

  it('resumes from the checkpoint after a restart and resubmits open intents with their commandIds', async () => {
    f = botFixture({ closeStore: false });
    f.ledger.end = 10;
    await f.bot.start();
    f.ledger.updateQueue.push(invoiceCreated(11), invoiceCreated(12));
    await f.settle();
    expect(f.ledger.submits).toHaveLength(2);
    complete(f, 1, 13);
    await f.settle();
    const stopping = f.bot.stop();
    await f.clock.advance(10_000); // grace period: the first completion never comes
    await stopping;
    expect(f.bot.state).toBe('stopped');
    expect(f.store.checkpoint()).toBe(10);
    const open = f.store.openIntents();
    expect(open.map((i) => i.commandId)).toEqual([f.ledger.submits[0]!.commandId]);

    f.ledger.end = 20;
    const again = f.restart();
    await again.start();
    await f.settle();
    // Updates resume after the checkpoint; completions no later than the open intent's offset.
    expect(f.ledger.updateStreams[1]?.request.beginExclusive).toBe(10);
    expect(f.ledger.completionStreams[1]?.request.beginExclusive).toBe(11);
    expect(f.ledger.submits).toHaveLength(3);
    expect(f.ledger.submits[2]!.commandId).toBe(f.ledger.submits[0]!.commandId);
    expect(f.ledger.submits[2]!.submissionId).not.toBe(f.ledger.submits[0]!.submissionId);
    // The replay of offsets 11 and 12 finds both intents in the journal: nothing new is submitted.
    f.ledger.updateQueue.push(invoiceCreated(11), invoiceCreated(12));
    await f.settle();
    expect(f.ledger.submits).toHaveLength(3);
    complete(f, 2, 21);
    await f.settle();
    expect(f.store.openIntents()).toEqual([]);
    expect(f.store.checkpoint()).toBe(12);
    await again.stop();
  });

  it('counts and logs rule errors with the rule, update and file position, and keeps going', async () => {
    const logger = recordingLogger();
    f = botFixture({
      logger,
      rules: rules(FAILING_ACCEPT_RULES),
    });
    await f.bot.start();
    f.ledger.updateQueue.push(invoiceCreated(1), invoiceCreated(2));
    await f.settle();
    expect(f.bot.metrics.ruleErrors).toBe(2);
    expect(f.bot.metrics.ruleErrorsByRule).toEqual({ accept: 2 });
    expect(f.bot.metrics.lastOffset).toBe(2);
    const line = logger.lines.find((l) => l.msg === 'rule evaluation failed');
    expect(line?.fields).toMatchObject({
      ruleId: 'accept',
      updateId: 'upd-1',
      offset: 1,
      file: 'rules.yaml',
      line: 5,
    });
  });

  it('logs each intent state change at debug and the finished intent at info, with the ids in fields', async () => {
    const logger = recordingLogger();
    f = botFixture({ logger });
    await f.bot.start();
    f.ledger.updateQueue.push(invoiceCreated(3));
    await f.settle();
    complete(f, 0, 4);
    await f.settle();
    const lines = logger.lines.filter(
      (l) => l.msg === 'intent state changed' || l.msg === 'intent finished',
    );
    expect(lines.map((l) => [l.level, l.msg, l.fields.state])).toEqual([
      ['debug', 'intent state changed', 'pending'],
      ['debug', 'intent state changed', 'submitted'],
      ['info', 'intent finished', 'succeeded'],
    ]);
    for (const l of lines) {
      expect(l.fields).toMatchObject({
        ruleId: 'accept',
        commandId: f.ledger.submits[0]!.commandId,
        offset: 3,
        updateId: 'upd-3',
      });
    }
  });

  it('after pruning, fires created rules on the gap contracts of the ACS once, then resumes at the pruning offset', async () => {
    const logger = recordingLogger();
    const text = `${ACCEPT_RULES}  - id: note-archive
    on: { archived: '#invoices:Invoice:Invoice', party: payer }
    then:
      - create:
          template: '#invoices:Invoice:Note'
          createArguments: { owner: '\${{ parties.payer }}' }
        actAs: [payer]
`;
    f = botFixture({ logger, start: { kind: 'offset', offset: 5 }, rules: rules(text) });
    f.ledger.end = 50;
    f.ledger.prunedUpTo = 30;
    f.ledger.updatesErrors.push(
      apiError('PARTICIPANT_PRUNED_DATA_ACCESSED', 9, 9, 'pruned', { earliest_offset: '30' }),
    );
    // 4: evaluated before the checkpoint; 10: in the gap, fires; 20: in the gap, condition
    // false; 25: in the gap, but an earlier run recorded its intent under the live key.
    f.ledger.activeSet = [
      activeContract(4),
      activeContract(10),
      activeContract(20, { currency: 'EUR' }),
      activeContract(25),
    ];
    const live = createdEventOf(25);
    f.store.recordIntents([
      {
        commandId: commandIdFor({
          ruleId: 'accept',
          revision: 1,
          actAs: [PAYER],
          triggerKey: { kind: 'event', updateId: 'upd-25', nodeId: live.nodeId },
          actionIndex: 0,
        }),
        userId: 'ledgerbot',
        actAs: [PAYER],
        ruleId: 'accept',
        revision: 1,
        actionIndex: 0,
        trigger: { kind: 'event', updateId: 'upd-25', nodeId: live.nodeId },
        offset: 25,
        payload: null,
      },
    ]);
    f.store.batch(() => f!.store.advanceCheckpoint(5));
    await f.bot.start();
    await f.settle();

    expect(f.ledger.updateStreams.map((s) => s.request.beginExclusive)).toEqual([5, 30]);
    expect(f.ledger.acsRequests.map((r) => r.activeAtOffset)).toEqual([30]);
    // Only the created rules' templates and parties are read.
    expect(Object.keys(f.ledger.acsRequests[0]!.eventFormat.filtersByParty ?? {})).toEqual([PAYER]);
    expect(f.store.checkpoint()).toBe(30);
    expect(f.bot.metrics.prunedRestarts).toBe(1);

    const recovered = f.store
      .listIntents()
      .filter((i) => i.trigger.kind === 'contract')
      .map((i) => ({ trigger: i.trigger, offset: i.offset, ruleId: i.ruleId }));
    expect(recovered).toEqual([
      {
        trigger: { kind: 'contract', contractId: '00inv10', nodeId: 0 },
        offset: 30,
        ruleId: 'accept',
      },
    ]);
    const expectedId = commandIdFor({
      ruleId: 'accept',
      revision: 1,
      actAs: [PAYER],
      triggerKey: { kind: 'contract', contractId: '00inv10', nodeId: 0 },
      actionIndex: 0,
    });
    const submitted = f.ledger.submits.find((c) => c.commandId === expectedId);
    expect(submitted?.commands).toEqual([
      {
        ExerciseCommand: {
          templateId: '#invoices:Invoice:Invoice',
          contractId: '00inv10',
          choice: 'Accept',
          choiceArgument: {},
        },
      },
    ]);
    // The dedup period is anchored at the read that justified it: the ACS at the pruning offset.
    expect(submitted?.deduplicationPeriod).toEqual({ DeduplicationOffset: { value: 30 } });

    const loud = logger.lines.filter(
      (l) => l.level === 'error' && l.fields.errorCode === 'PARTICIPANT_PRUNED_DATA_ACCESSED',
    );
    expect(loud).toHaveLength(1);
    expect(loud[0]?.msg).toMatch(/PRUNED.*LOST/);
    expect(loud[0]?.fields).toMatchObject({
      stream: 'updates',
      fromOffset: 5,
      toOffset: 30,
      skippedOffsets: 25,
      ledgerEnd: 50,
      earliestOffset: '30',
      replayedContracts: 3,
      replayedIntents: 1,
      alreadyInJournal: 1,
      notRecoveredRules: ['note-archive'],
    });
    expect(f.bot.state).toBe('running');

    // A restart resumes at the checkpoint: no second recovery, no second intent.
    const count = f.store.listIntents().length;
    const stopping = f.bot.stop();
    await f.clock.advance(60_000);
    await stopping;
    const again = f.restart({ start: { kind: 'checkpoint' } });
    await again.start();
    await f.settle();
    expect(f.ledger.updateStreams.at(-1)?.request.beginExclusive).toBe(30);
    expect(f.ledger.acsRequests).toHaveLength(1);
    expect(f.store.listIntents()).toHaveLength(count);
  });

  it('after pruning, a recovery that finds the participant not pruned past it backs off and retries', async () => {
    const logger = recordingLogger();
    f = botFixture({
      logger,
      start: { kind: 'offset', offset: 5 },
      restartBackoff: { initialMs: 1_000, maxMs: 1_000 },
    });
    f.ledger.end = 50;
    f.ledger.prunedUpTo = 0; // not (yet) reported
    f.ledger.updatesErrors.push(
      apiError('PARTICIPANT_PRUNED_DATA_ACCESSED', 9, 9, 'pruned', { earliest_offset: '30' }),
    );
    await f.bot.start();
    await f.settle();
    expect(f.ledger.updateStreams).toHaveLength(1);
    expect(logger.lines.some((l) => l.fields.errorCode === 'PRUNING_OFFSET_UNCLEAR')).toBe(true);
    f.ledger.prunedUpTo = 30;
    await f.clock.advance(1_000);
    await f.settle();
    expect(f.ledger.updateStreams.map((s) => s.request.beginExclusive)).toEqual([5, 30]);
    expect(f.bot.metrics.prunedRestarts).toBe(1);
  });

  it('retries auth failures of the stream with backoff, not in a hot loop', async () => {
    f = botFixture({ restartBackoff: { initialMs: 1_000, maxMs: 8_000 } });
    const unauthenticated = () =>
      apiError('NA', -1, 16, 'A security-sensitive error has been received', {}, 401);
    f.ledger.updatesErrors.push(unauthenticated(), unauthenticated());
    await f.bot.start();
    await f.settle();
    expect(f.ledger.updateStreams).toHaveLength(1);
    await f.clock.advance(1_000);
    expect(f.ledger.updateStreams).toHaveLength(2);
    await f.clock.advance(999);
    expect(f.ledger.updateStreams).toHaveLength(2); // the second wait is longer (1-2 s)
    await f.clock.advance(1_001);
    expect(f.ledger.updateStreams).toHaveLength(3);
    expect(f.bot.state).toBe('running');
  });

  it('fails on a stream error retrying cannot fix, and settles `done`', async () => {
    f = botFixture();
    f.ledger.updatesErrors.push(
      apiError('TEMPLATES_OR_INTERFACES_NOT_FOUND', 11, 5, 'no such template'),
    );
    const states: BotState[] = [];
    f.bot.events.on('state', (s) => states.push(s));
    await f.bot.start();
    await f.bot.done;
    expect(f.bot.state).toBe('failed');
    expect(f.bot.error).toBeInstanceOf(RuntimeError);
    expect((f.bot.error as RuntimeError).code).toBe('STREAM_FAILED');
    expect(states).toEqual(['starting', 'running', 'failed']);
    await f.bot.stop(); // idempotent in every state
    expect(f.bot.state).toBe('failed');
  });

  it('goes created → starting → running → stopping → stopped; stop is idempotent', async () => {
    f = botFixture();
    const states: BotState[] = [];
    f.bot.events.on('state', (s) => states.push(s));
    await f.bot.start();
    await Promise.all([f.bot.stop(), f.bot.stop()]);
    await f.bot.stop();
    expect(states).toEqual(['starting', 'running', 'stopping', 'stopped']);
    await expect(f.bot.start()).rejects.toThrow(/start\(\) needs a new bot/);
  });

  it('rejects a rule whose party alias has no id at create time', () => {
    expect(() =>
      createBot({
        rules: rules(),
        parties: { issuer: 'i::1' },
        userId: 'u',
        ledger: {} as never,
        store: {} as never,
      }),
    ).toThrow(/party alias "payer"/);
  });
});
