import { afterEach, describe, expect, it } from 'vitest';
import type { JsGetActiveContractsResponse } from '../../src/ledger/wire/wire-types.js';
import type { CompiledRule } from '../../src/rules/compiled-rule.js';
import type { Intent } from '../../src/rules/evaluation-result.js';
import type { SlotRunResult } from '../../src/schedule/run-slot.js';
import { RuntimeError } from '../../src/runtime/runtime-error.js';
import { runOneSlot, type RunOneSlotOptions } from '../../src/runtime/run-one-slot.js';
import { invoiceCreated, PARTIES, PAYER, rules } from './bot-fixture.js';
import { FakeLedger } from './fake-ledger.js';
import { partsFixture, type PartsFixture } from './parts-fixture.js';
import { completionOf } from './tracker-fixture.js';

const REMIND = `version: 1
rules:
  - id: remind
    schedule: { cron: '0 9 * * MON-FRI', timezone: UTC }
    forEach: { activeContracts: '#invoices:Invoice:Invoice', party: payer }
    when: contract.createArgument.currency == "USD"
    then:
      - exercise:
          template: '#invoices:Invoice:Invoice'
          contractId: '\${{ contract.contractId }}'
          choice: Remind
        actAs: [payer]
`;
const SLOT = Date.UTC(2026, 0, 5, 9);

let f: PartsFixture | undefined;
afterEach(() => {
  f?.cleanup();
  f = undefined;
});

/** The invoice `invoiceCreated(offset)` creates, as an element of the active contract set. */
function activeContract(offset: number, currency = 'USD'): JsGetActiveContractsResponse {
  const element = invoiceCreated(offset, { currency });
  if (element.kind !== 'transaction') throw new Error('not a transaction');
  const event = element.transaction.events[0];
  if (event === undefined || !('CreatedEvent' in event)) throw new Error('not a creation');
  return {
    workflowId: '',
    contractEntry: {
      JsActiveContract: {
        createdEvent: event.CreatedEvent,
        synchronizerId: 'sync::1220ef',
        reassignmentCounter: 0,
      },
    },
  };
}

function setUp(): { fx: PartsFixture; ledger: FakeLedger; rule: CompiledRule } {
  const fx = partsFixture({ rules: rules(REMIND) });
  f = fx;
  const ledger = new FakeLedger();
  ledger.end = 40;
  ledger.activeSet = [activeContract(10), activeContract(20, 'EUR'), activeContract(30)];
  // A checkpoint of the updates stream, which a slot run must leave where it is.
  fx.store.resetCheckpoint(5);
  return { fx, ledger, rule: fx.book.rules.rules[0]! };
}

function options(
  fx: PartsFixture,
  ledger: FakeLedger,
  rule: CompiledRule,
  more: Partial<RunOneSlotOptions> = {},
): RunOneSlotOptions {
  return {
    rule,
    slot: SLOT,
    parties: PARTIES,
    userId: 'ledgerbot',
    ledger,
    store: fx.store,
    clock: fx.clock,
    random: fx.random,
    logger: fx.logger,
    timeoutMs: 60_000,
    ...more,
  };
}

/** Completes submission `n` with success at `offset`, on the latest completions stream. */
function complete(ledger: FakeLedger, n: number, offset: number): void {
  const submitted = ledger.submits[n];
  if (submitted === undefined) throw new Error(`no submission #${n}`);
  const completion = completionOf(submitted, offset);
  ledger.completionQueue.push({ kind: 'completion', offset, completion });
}

describe('runOneSlot', () => {
  it("records the slot's intents, submits them, settles them from completions and stops everything", async () => {
    const { fx, ledger, rule } = setUp();
    const printed: Intent[] = [];
    const recorded: SlotRunResult[] = [];
    const running = runOneSlot(
      options(fx, ledger, rule, {
        onIntents: (intents) => printed.push(...intents),
        onRecorded: (result) => recorded.push(result),
      }),
    );
    await fx.settle();
    // The slot is run and recorded; the outcomes are awaited.
    expect(recorded.map((r) => r.intents)).toEqual([2]);
    // Only the completions stream: no updates stream, from the ledger end, for the acting party.
    expect(ledger.updateStreams).toHaveLength(0);
    expect(ledger.completionStreams).toHaveLength(1);
    expect(ledger.completionStreams[0]!.request).toMatchObject({
      beginExclusive: 40,
      parties: [PAYER],
    });
    // Two USD invoices: two intents, recorded before they were submitted.
    expect(printed).toHaveLength(2);
    const ids = printed.map((i) => i.commandId);
    expect(ledger.submits.map((s) => s.commandId)).toEqual(ids);
    expect(ids.map((id) => fx.store.getIntent(id)?.state)).toEqual(['submitted', 'submitted']);
    expect(ids.map((id) => fx.store.getIntent(id)?.offset)).toEqual([40, 40]);

    complete(ledger, 0, 41);
    await fx.settle();
    complete(ledger, 1, 42);
    const run = await running;

    expect(run.settled).toBe(true);
    expect(run.result).toMatchObject({ ruleId: 'remind', snapshotOffset: 40, contracts: 3 });
    expect(run.intents.map((i) => i.commandId)).toEqual(ids);
    expect(run.outcomes.map((r) => [r.commandId, r.state])).toEqual([
      [ids[0], 'succeeded'],
      [ids[1], 'succeeded'],
    ]);
    // Stopped: the stream's signal aborted, no timer left; the store open, the slot completed,
    // the checkpoint untouched.
    expect(ledger.completionStreams[0]!.queue.signal?.aborted).toBe(true);
    expect(fx.clock.pendingTimers).toBe(0);
    expect(fx.store.getSlotRecord('remind')?.lastCompletedSlot).toBe(SLOT);
    expect(fx.store.checkpoint()).toBe(5);
    expect(fx.logger.lines.find((l) => l.msg === 'slot run')?.fields).toMatchObject({
      ruleId: 'remind',
      intents: 2,
      open: 0,
      settled: true,
    });
  });

  it('leaves what is open after the timeout in the journal; running the slot again resumes it under the same commandIds', async () => {
    const { fx, ledger, rule } = setUp();
    const first = runOneSlot(options(fx, ledger, rule, { timeoutMs: 1_000 }));
    await fx.settle();
    expect(ledger.submits).toHaveLength(2);
    complete(ledger, 0, 41);
    await fx.settle();
    await fx.clock.advance(1_000);
    // The stop drains: it waits up to stopGraceMs for the completion of the one still out.
    await fx.settle();
    expect(fx.logger.lines.some((l) => l.msg === 'slot run')).toBe(false);
    await fx.clock.advance(10_000);
    const timedOut = await first;
    expect(timedOut.settled).toBe(false);
    expect(timedOut.outcomes.map((r) => r.state)).toEqual(['succeeded', 'submitted']);
    const open = timedOut.outcomes[1]!;
    expect(fx.store.openIntents().map((r) => r.commandId)).toEqual([open.commandId]);
    expect(ledger.completionStreams[0]!.queue.signal?.aborted).toBe(true);
    expect(fx.clock.pendingTimers).toBe(0);

    // The ledger moved on; the slot was completed, so its snapshot is read again, and the
    // completions are followed from the open intent's offset (before the ledger end).
    ledger.end = 50;
    const again = runOneSlot(options(fx, ledger, rule));
    await fx.settle();
    expect(ledger.completionStreams[1]!.request.beginExclusive).toBe(40);
    // Only the open one is submitted again, under its commandId; the succeeded one is not.
    expect(ledger.submits.map((s) => s.commandId).slice(2)).toEqual([open.commandId]);
    complete(ledger, 2, 51);
    const second = await again;
    expect(second.settled).toBe(true);
    expect(second.result.snapshotOffset).toBe(50);
    expect(second.outcomes.map((r) => r.state)).toEqual(['succeeded', 'succeeded']);
    expect(fx.store.openIntents()).toEqual([]);
    expect(fx.store.checkpoint()).toBe(5);
  });

  it('closes the store only when told', async () => {
    const { fx, ledger, rule } = setUp();
    ledger.activeSet = [];
    const run = await runOneSlot(options(fx, ledger, rule, { closeStore: true }));
    expect(run).toMatchObject({ settled: true, intents: [], outcomes: [] });
    expect(() => fx.store.checkpoint()).toThrow();
  });

  it('rejects with STREAM_FAILED when the completions stream fails, after stopping', async () => {
    const { fx, ledger, rule } = setUp();
    const running = runOneSlot(options(fx, ledger, rule));
    const outcome = running.then(
      () => undefined,
      (err: unknown) => err,
    );
    await fx.settle();
    ledger.completionQueue.fail(new Error('the socket closed for good'));
    await fx.settle();
    await fx.clock.advance(10_000);
    const err = await outcome;
    expect(err).toBeInstanceOf(RuntimeError);
    expect((err as RuntimeError).code).toBe('STREAM_FAILED');
    expect(fx.clock.pendingTimers).toBe(0);
    // The intents stay open for the next run; the store stays open.
    expect(fx.store.openIntents()).toHaveLength(2);
  });

  it('refuses a rule whose party alias has no id before any ledger call (and closes the store if told)', async () => {
    const { fx, ledger, rule } = setUp();
    const err: unknown = await runOneSlot(
      options(fx, ledger, rule, { parties: { issuer: PARTIES.issuer }, closeStore: true }),
    ).catch((e: unknown) => e);
    expect(() => fx.store.checkpoint()).toThrow();
    expect(err).toBeInstanceOf(RuntimeError);
    expect((err as RuntimeError).code).toBe('UNKNOWN_PARTY');
    expect(ledger.completionStreams).toHaveLength(0);
    expect(ledger.acsRequests).toHaveLength(0);
  });
});
