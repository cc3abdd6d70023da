import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventFormat } from '../../src/ledger/filters.js';
import { loadRulesOrThrow } from '../../src/rules/load-rules.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import { recordingLogger } from '../runtime/bot-fixture.js';
import { withScope } from '../support/test-scope.js';
import {
  allTerminal,
  completionOutcomes,
  countContracts,
  expectedEffects,
  INVOICE,
  invoicePlan,
  isSmall,
  issueInvoices,
  RULES_DIR,
  SEEN,
  startInProcessBot,
  startTestLedger,
  waitFor,
  waitForEffects,
  type InProcessBot,
  type InvoiceSpec,
  type TestLedger,
} from './harness.js';

describe('replicas', () => {
  it(
    'two bots with the same rules on the same participant produce each effect once',
    { timeout: 60_000 },
    () =>
      withScope(async (scope) => {
        const ledger = scope.own(await startTestLedger(2001));
        const a = scope.own(
          await startInProcessBot(ledger, { stateDir: scope.tempDir(), seed: 1 }),
        );
        const b = scope.own(
          await startInProcessBot(ledger, { stateDir: scope.tempDir(), seed: 2 }),
        );
        const plan = invoicePlan(120, 2001);
        const expected = expectedEffects(plan);
        await issueInvoices(ledger, plan.slice(0, 60), 1);
        await issueInvoices(ledger, plan.slice(60), 6);

        const counts = await waitForEffects(ledger, expected, 45_000);
        expect(counts).toMatchObject({ ...expected, duplicates: [] });
        const intents = expected.seen + 2 * expected.receipts;
        for (const bot of [a, b]) {
          const states = await waitFor(() => bot.states(), allTerminal, 15_000, 'all terminal');
          // Each replica tracked every intent to the end; none was given up.
          expect(states.succeeded + states.duplicate).toBe(intents);
          expect(states['dead-lettered'] + states.rejected).toBe(0);
        }
        // They really raced: both submitted, and the ledger turned the second copies away.
        expect(
          (a.submitOutcomes.get('ok') ?? 0) + (b.submitOutcomes.get('ok') ?? 0),
        ).toBeGreaterThan(intents);
        const outcomes = await completionOutcomes(ledger);
        expect(outcomes.get('OK')).toBe(intents);
        // Canton interprets before it deduplicates: the second copy of a create is a
        // DUPLICATE_COMMAND, that of a consuming exercise (accept, settle) fails on its archived
        // input, synchronously or in its completion; the twin's success completion (same user) or
        // the earlier-commit lookup then settles it.
        const both = (code: string): number =>
          (a.submitOutcomes.get(code) ?? 0) + (b.submitOutcomes.get(code) ?? 0);
        const turnedAway =
          (outcomes.get('DUPLICATE_COMMAND') ?? 0) +
          (outcomes.get('LOCAL_VERDICT_INACTIVE_CONTRACTS') ?? 0) +
          both('CONTRACT_NOT_FOUND') +
          both('SUBMISSION_ALREADY_IN_FLIGHT');
        expect(turnedAway).toBeGreaterThan(intents / 2);
      }),
  );
});

/** Cancels (archives) the invoices of `plan` as the issuer, through the driver user. */
async function cancelInvoices(ledger: TestLedger, plan: readonly InvoiceSpec[]): Promise<void> {
  const refs = new Set(plan.map((p) => p.reference));
  const offset = await ledger.client.ledgerEnd();
  const ids: string[] = [];
  for await (const element of ledger.client.activeContracts({
    activeAtOffset: offset,
    eventFormat: eventFormat({ parties: [ledger.parties.issuer], templates: [INVOICE] }),
  })) {
    const entry = element.contractEntry;
    if (entry === undefined || !('JsActiveContract' in entry)) continue;
    const event = entry.JsActiveContract.createdEvent;
    if (refs.has(referenceOf(event.createArgument))) ids.push(event.contractId);
  }
  expect(ids).toHaveLength(plan.length);
  for (const contractId of ids) {
    await ledger.client.submitAndWait({
      commands: [
        {
          ExerciseCommand: {
            templateId: INVOICE,
            contractId,
            choice: 'Cancel',
            choiceArgument: {},
          },
        },
      ],
      commandId: `driver-cancel-${contractId.slice(0, 40)}`,
      userId: 'driver',
      actAs: [ledger.parties.issuer],
      deduplicationPeriod: { DeduplicationOffset: { value: offset } },
    });
  }
}

/** The references of the audit records on the ledger. */
async function auditedReferences(ledger: TestLedger): Promise<Set<string>> {
  const out = new Set<string>();
  for await (const element of ledger.client.activeContracts({
    activeAtOffset: await ledger.client.ledgerEnd(),
    eventFormat: eventFormat({ parties: [ledger.parties.issuer], templates: [SEEN] }),
  })) {
    const entry = element.contractEntry;
    if (entry !== undefined && 'JsActiveContract' in entry) {
      out.add(referenceOf(entry.JsActiveContract.createdEvent.createArgument));
    }
  }
  return out;
}

/** `reference` of an invoice or audit record argument, or of an intent payload's command. */
function referenceOf(value: unknown): string {
  const direct = (value as { reference?: unknown } | null)?.reference;
  if (typeof direct === 'string') return direct;
  const text = JSON.stringify(value ?? null);
  return /"reference":"([^"]+)"/.exec(text)?.[1] ?? '';
}

/** Controllers of Invoice:Cancel are the issuer; the payer acting alone is not authorised. */
const CANCEL_AS_PAYER = `version: 1
rules:
  - id: cancel-as-payer
    description: a broken rule - the payer may not cancel the issuer's invoice
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    when: event.createArgument.currency == "CHF"
    then:
      - exercise:
          template: '#invoices:Invoice:Invoice'
          contractId: '\${{ event.contractId }}'
          choice: Cancel
        actAs: [payer]
    retry: { maxAttempts: 20, initialDelay: 20ms, maxDelay: 100ms, deadline: 2m }
    rateLimit: { perSecond: 1000, burst: 1000 }
`;

describe('dead letters', () => {
  it(
    'a final rejection is dead-lettered with its last error, once, and never retried',
    { timeout: 60_000 },
    () =>
      withScope(async (scope) => {
        const ledger = scope.own(await startTestLedger(2002));
        const files = readdirSync(RULES_DIR)
          .filter((f) => f.endsWith('.yaml'))
          .map((f) => ({
            path: join(RULES_DIR, f),
            text: readFileSync(join(RULES_DIR, f), 'utf8'),
          }));
        files.push({ path: 'cancel-as-payer.yaml', text: CANCEL_AS_PAYER });
        const rules = loadRulesOrThrow(files, { parties: ledger.parties });
        const bot = scope.own(
          await startInProcessBot(ledger, { stateDir: scope.tempDir(), seed: 3, rules }),
        );
        const plan = invoicePlan(60, 2002);
        const chf = plan.filter((p) => p.currency === 'CHF');
        expect(chf.length).toBeGreaterThan(3);
        await issueInvoices(ledger, plan, 3);

        // The good rules still do their work next to the broken one.
        const expected = expectedEffects(plan);
        expect(await waitForEffects(ledger, expected, 30_000)).toMatchObject({
          ...expected,
          duplicates: [],
        });
        const states = await waitFor(() => bot.states(), allTerminal, 15_000, 'all terminal');
        expect(states['dead-lettered']).toBe(chf.length);
        const letters = bot.store.listDeadLetters({ ruleId: 'cancel-as-payer' });
        expect(letters).toHaveLength(chf.length);
        for (const letter of letters) {
          expect(letter.intent.attempts).toBe(1);
          expect(JSON.stringify(letter.error)).toContain('DAML_AUTHORIZATION_ERROR');
          expect(letter.event).toBeDefined();
        }
        expect(bot.submitOutcomes.get('DAML_AUTHORIZATION_ERROR')).toBe(chf.length);
        // Nothing is retried afterwards.
        const submitted = bot.bot.metrics.submissions;
        await new Promise((r) => setTimeout(r, 500));
        expect(bot.bot.metrics.submissions).toBe(submitted);
        // And the CHF invoices are still there, untouched.
        expect((await countContracts(ledger)).invoices).toBe(expected.invoices);
      }),
  );
});

describe('pruning', () => {
  it(
    'pruned past the checkpoint while stopped: the still-active gap invoices get their effects once from the ACS, archived ones none, and a restart does not re-fire',
    { timeout: 90_000 },
    () =>
      withScope(async (scope) => {
        const ledger = scope.own(await startTestLedger(2003));
        const dir = scope.tempDir();
        const plan = invoicePlan(90, 2003);
        const first = plan.slice(0, 30);
        const archivedInGap = plan.slice(30, 40);
        const prunedInGap = plan.slice(40, 60);
        const liveInGap = plan.slice(60, 75);
        const later = plan.slice(75);

        const bot1 = scope.own(await startInProcessBot(ledger, { stateDir: dir, seed: 4 }));
        await issueInvoices(ledger, first, 2);
        await waitForEffects(ledger, expectedEffects(first), 30_000);
        await waitFor(() => bot1.states(), allTerminal, 15_000, 'all terminal');
        await bot1.stop();
        const checkpoint = bot1.bot.checkpoint() ?? (await ledger.client.ledgerEnd());

        // While the bot is down: invoices created and cancelled, invoices created (their updates
        // will be pruned), the pruning point, invoices created after it (still readable).
        await issueInvoices(ledger, archivedInGap, 2);
        await cancelInvoices(ledger, archivedInGap);
        await issueInvoices(ledger, prunedInGap, 2);
        const prunedAt = await ledger.client.ledgerEnd();
        await issueInvoices(ledger, liveInGap, 2);
        await ledger.prune(prunedAt);
        expect(prunedAt).toBeGreaterThan(checkpoint);

        const logger = recordingLogger();
        const bot2 = scope.own(await startInProcessBot(ledger, { stateDir: dir, seed: 5, logger }));
        await waitFor(
          () => bot2.bot.metrics.prunedRestarts,
          (n) => n > 0,
          15_000,
          'recovery',
        );
        await issueInvoices(ledger, later, 2);
        const handled = [...first, ...prunedInGap, ...liveInGap, ...later];
        const expected = expectedEffects(handled);
        expect(await waitForEffects(ledger, expected, 45_000)).toMatchObject({
          ...expected,
          duplicates: [],
        });
        // The cancelled invoices got nothing: no audit record among the ledger's references.
        expect(await auditedReferences(ledger)).toEqual(new Set(handled.map((p) => p.reference)));
        const states = await waitFor(() => bot2.states(), allTerminal, 20_000, 'all terminal');
        expect(states['dead-lettered'] + states.rejected).toBe(0);

        // The pruned creations were fired under contract keys, the readable ones under the live key.
        const intents = bot2.store.listIntents({ limit: 10_000 });
        const recovered = intents.filter((i) => i.trigger.kind === 'contract');
        expect(recovered).toHaveLength(prunedInGap.length + prunedInGap.filter(isSmall).length);
        for (const i of recovered) expect(i.offset).toBe(prunedAt);
        const liveRefs = new Set(liveInGap.map((p) => p.reference));
        const liveKeyed = intents.filter(
          (i) =>
            i.trigger.kind === 'event' &&
            i.offset > prunedAt &&
            i.ruleId === 'audit-invoices' &&
            liveRefs.has(referenceOf(i.payload)),
        );
        expect(liveKeyed).toHaveLength(liveInGap.length);

        expect(bot2.bot.metrics.prunedRestarts).toBe(1);
        const loud = logger.lines.filter(
          (l) => l.level === 'error' && l.fields.errorCode === 'PARTICIPANT_PRUNED_DATA_ACCESSED',
        );
        expect(loud).toHaveLength(1);
        expect(loud[0]?.msg).toMatch(/PRUNED.*LOST/);
        expect(loud[0]?.fields).toMatchObject({
          toOffset: prunedAt,
          replayedContracts: prunedInGap.length,
          replayedIntents: recovered.length,
          notRecoveredRules: ['settle-accepted-invoices'],
        });
        expect(bot2.bot.state).toBe('running');

        // A second restart neither recovers nor fires again.
        await bot2.stop();
        const before = await completionOutcomes(ledger, 'ledgerbot', prunedAt);
        const bot3 = scope.own(await startInProcessBot(ledger, { stateDir: dir, seed: 6 }));
        // Nothing happening is checked over a window, opened once both streams are connected: on
        // a slow machine the window does not pass before the bot even listens.
        await waitFor(
          () => bot3.bot.metrics.updatesConnected && bot3.bot.metrics.completionsConnected,
          (connected) => connected,
          10_000,
          'both streams of the restarted bot connected',
        );
        await new Promise((r) => setTimeout(r, 1_000));
        expect(bot3.bot.metrics.prunedRestarts).toBe(0);
        expect(bot3.store.listIntents({ limit: 10_000 })).toHaveLength(intents.length);
        expect(bot3.bot.metrics.submissions).toBe(0);
        expect(await countContracts(ledger)).toMatchObject({ ...expected, duplicates: [] });
        expect(await completionOutcomes(ledger, 'ledgerbot', prunedAt)).toEqual(before);
      }),
  );

  it(
    'two replicas both hitting the same pruning produce each effect of the gap once',
    { timeout: 90_000 },
    () =>
      withScope(async (scope) => {
        const ledger = scope.own(await startTestLedger(2006));
        const plan = invoicePlan(40, 2006);
        const [first, gap] = [plan.slice(0, 10), plan.slice(10)];
        const dirs = [scope.tempDir(), scope.tempDir()];
        const a1 = scope.own(await startInProcessBot(ledger, { stateDir: dirs[0]!, seed: 21 }));
        const b1 = scope.own(await startInProcessBot(ledger, { stateDir: dirs[1]!, seed: 22 }));
        await issueInvoices(ledger, first, 2);
        await waitForEffects(ledger, expectedEffects(first), 30_000);
        for (const b of [a1, b1]) await waitFor(() => b.states(), allTerminal, 15_000, 'terminal');
        await a1.stop();
        await b1.stop();
        await issueInvoices(ledger, gap, 2);
        const prunedAt = await ledger.client.ledgerEnd();
        await ledger.prune(prunedAt);

        const a2 = scope.own(await startInProcessBot(ledger, { stateDir: dirs[0]!, seed: 23 }));
        const b2 = scope.own(await startInProcessBot(ledger, { stateDir: dirs[1]!, seed: 24 }));
        const expected = expectedEffects(plan);
        expect(await waitForEffects(ledger, expected, 45_000)).toMatchObject({
          ...expected,
          duplicates: [],
        });
        const recovered = gap.length + gap.filter(isSmall).length;
        for (const b of [a2, b2]) {
          const states = await waitFor(() => b.states(), allTerminal, 20_000, 'terminal');
          expect(states['dead-lettered'] + states.rejected).toBe(0);
          expect(b.bot.metrics.prunedRestarts).toBe(1);
          const contractKeyed = b.store
            .listIntents({ limit: 10_000 })
            .filter((i) => i.trigger.kind === 'contract');
          expect(contractKeyed).toHaveLength(recovered);
        }
        // Both replicas computed the same commandIds: the ledger committed each change once.
        const ids = (b: InProcessBot): string[] =>
          b.store
            .listIntents({ limit: 10_000 })
            .filter((i) => i.trigger.kind === 'contract')
            .map((i) => i.commandId)
            .sort();
        expect(ids(a2)).toEqual(ids(b2));
        const after = await completionOutcomes(ledger, 'ledgerbot', prunedAt);
        expect(after.get('OK')).toBe(recovered + gap.filter(isSmall).length); // + the settlements
      }),
  );

  it(
    'intents still open when the pruning happened: resubmitted under a dedup duration, each effect once',
    { timeout: 60_000 },
    () =>
      withScope(async (scope) => {
        const ledger = scope.own(await startTestLedger(2004));
        const dir = scope.tempDir();
        // Few enough that every intent is out at once (per-rule concurrency 16).
        const plan = invoicePlan(14, 2004);
        await issueInvoices(ledger, plan, 3);
        // The bot submits, but the participant only processes each submission 2.5 s later; the bot
        // is stopped meanwhile (short grace), leaving its intents `submitted` in the journal.
        await ledger.faults({ completionDelayMs: [2500, 2500] });
        const bot1 = scope.own(
          await startInProcessBot(ledger, {
            stateDir: dir,
            seed: 6,
            start: { kind: 'begin' },
            stopGraceMs: 50,
          }),
        );
        const first = plan.length + plan.filter(isSmall).length; // audit + accept
        await waitFor(
          () => bot1.bot.metrics.submissions,
          (n) => n >= first,
          10_000,
          'submissions',
        );
        expect(bot1.states().submitted).toBe(first);
        await bot1.stop();
        // The delayed submissions land while the bot is down; then the participant prunes.
        const landed = {
          ...expectedEffects(plan),
          receipts: 0,
          payments: plan.filter(isSmall).length,
        };
        await waitForEffects(ledger, landed, 15_000);
        await ledger.clearFaults();
        const prunedAt = await ledger.client.ledgerEnd();
        await ledger.prune(prunedAt);

        const logger = recordingLogger();
        const bot2 = scope.own(await startInProcessBot(ledger, { stateDir: dir, seed: 7, logger }));
        const states = await waitFor(() => bot2.states(), allTerminal, 20_000, 'all terminal');
        // Each open intent was resubmitted; its offset anchor was pruned, so the bot fell back to a
        // dedup duration. The audit creates still interpret, and the participant recognised them
        // as already done. The accepts consume their invoice, so Canton, interpreting before it
        // deduplicates, refuses them as CONTRACT_NOT_FOUND; the invoice's history is pruned, so
        // the ledger cannot say whether our own attempt archived it: dead-lettered for an operator,
        // never `rejected` (which would bury the success) and never retried blind.
        const accepts = plan.filter(isSmall).length;
        expect(states.duplicate).toBe(plan.length);
        expect(states.rejected).toBe(0);
        expect(states['dead-lettered']).toBe(accepts);
        for (const d of bot2.store.listDeadLetters()) {
          expect(d.intent.ruleId).toBe('accept-small-invoices');
          expect(d.error).toMatchObject({ code: 'EARLIER_COMMIT_UNKNOWN', reason: 'final' });
        }
        expect(
          logger.lines.some((l) => l.fields.errorCode === 'INVALID_DEDUPLICATION_PERIOD'),
        ).toBe(true);
        // Nothing twice. The Accept events were pruned before the bot saw them, so the payments
        // stay unsettled: the documented limit of pruning.
        await new Promise((r) => setTimeout(r, 300));
        expect(await countContracts(ledger)).toMatchObject({ ...landed, duplicates: [] });
        // After the pruning, not one change was committed for the bot: only duplicates.
        const after = await completionOutcomes(ledger, 'ledgerbot', prunedAt);
        expect(after.get('OK')).toBeUndefined();
        expect(after.get('DUPLICATE_COMMAND')).toBe(plan.length);
      }),
  );

  it(
    'an intent refused definitely on every attempt, still open when its offset was pruned: resubmitted anchored at the pruning offset, once',
    { timeout: 60_000 },
    () =>
      withScope(async (scope) => {
        // Every attempt got a definite synchronous rejection, so none can have committed: the
        // pruning alone (the participant refusing both the offset and a duration reaching before
        // it) is no reason to give up. The dedup period moves to the pruning offset instead.
        const ledger = scope.own(await startTestLedger(2005));
        const dir = scope.tempDir();
        const plan = invoicePlan(4, 2005).map((p) => ({ ...p, currency: 'CHF' })); // audit only
        await issueInvoices(ledger, plan, 1);
        await ledger.faults({ submitErrors: [{ code: 'SEQUENCER_BACKPRESSURE', rate: 1 }] });
        const bot1 = scope.own(
          await startInProcessBot(ledger, {
            stateDir: dir,
            seed: 8,
            start: { kind: 'begin' },
          }),
        );
        await waitFor(
          () => bot1.submitOutcomes.get('SEQUENCER_BACKPRESSURE') ?? 0,
          (n) => n >= 4,
          10_000,
          'rejections',
        );
        await bot1.stop();
        await ledger.clearFaults();
        const prunedAt = await ledger.client.ledgerEnd();
        await ledger.prune(prunedAt);

        const logger = recordingLogger();
        const bot2 = scope.own(await startInProcessBot(ledger, { stateDir: dir, seed: 9, logger }));
        const states = await waitFor(() => bot2.states(), allTerminal, 20_000, 'all terminal');
        expect(states.succeeded).toBe(4);
        expect(states['dead-lettered']).toBe(0);
        // The three anchored before the pruning offset were moved to it.
        const moved = logger.lines.filter((l) => l.fields.dedupOffset === prunedAt);
        expect(new Set(moved.map((l) => l.fields.commandId)).size).toBe(3);
        expect(await countContracts(ledger)).toMatchObject({ seen: 4, duplicates: [] });
        const after = await completionOutcomes(ledger, 'ledgerbot', prunedAt);
        expect(after.get('OK')).toBe(4);
      }),
  );

  it(
    'an intent in doubt (an attempt may have committed) whose offset was pruned: dead-lettered, never submitted blind',
    { timeout: 60_000 },
    () =>
      withScope(async (scope) => {
        const ledger = scope.own(await startTestLedger(2007));
        const dir = scope.tempDir();
        const plan = invoicePlan(3, 2007).map((p) => ({ ...p, currency: 'CHF' })); // audit only
        await issueInvoices(ledger, plan, 1);
        // Refused at first, like the test above; then the journal is made to say what a lost
        // response or a completion timeout would have left: an attempt that may have committed.
        await ledger.faults({ submitErrors: [{ code: 'SEQUENCER_BACKPRESSURE', rate: 1 }] });
        const bot1 = scope.own(
          await startInProcessBot(ledger, {
            stateDir: dir,
            seed: 10,
            start: { kind: 'begin' },
          }),
        );
        await waitFor(
          () => bot1.submitOutcomes.get('SEQUENCER_BACKPRESSURE') ?? 0,
          (n) => n >= 3,
          10_000,
          'rejections',
        );
        for (const i of bot1.store.listIntents()) expect(i.inDoubt).toBeUndefined();
        await bot1.stop();
        await ledger.clearFaults();
        const prunedAt = await ledger.client.ledgerEnd();
        await ledger.prune(prunedAt);
        const store = openSqliteStore({ dir });
        try {
          for (const i of store.openIntents()) {
            store.transition(i.commandId, { to: 'submitted', submissionId: 'lost-1' });
            store.transition(i.commandId, { to: 'pending', nextAttemptAt: 0 });
            expect(store.getIntent(i.commandId)?.inDoubt).toBe(true);
          }
        } finally {
          store.close();
        }

        const bot2 = scope.own(await startInProcessBot(ledger, { stateDir: dir, seed: 11 }));
        const states = await waitFor(() => bot2.states(), allTerminal, 20_000, 'all terminal');
        // The invoice at the pruning offset itself is still a valid anchor; the two before it are not.
        expect(states.succeeded).toBe(1);
        expect(states['dead-lettered']).toBe(2);
        for (const letter of bot2.store.listDeadLetters()) {
          expect(JSON.stringify(letter.error)).toContain('INVALID_DEDUPLICATION_PERIOD');
        }
        expect(await countContracts(ledger)).toMatchObject({ seen: 1, duplicates: [] });
      }),
  );
});
