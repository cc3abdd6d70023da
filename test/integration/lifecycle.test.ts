import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadRulesOrThrow } from '../../src/rules/load-rules.js';
import { recordingLogger } from '../runtime/bot-fixture.js';
import {
  allTerminal,
  completionOutcomes,
  countContracts,
  expectedEffects,
  invoicePlan,
  isSmall,
  issueInvoices,
  RULES_DIR,
  startInProcessBot,
  startTestLedger,
  tempDir,
  waitFor,
  waitForEffects,
  type InProcessBot,
  type TempDir,
  type TestLedger,
} from './harness.js';

let ledger: TestLedger | undefined;
const bots: InProcessBot[] = [];
const temps: TempDir[] = [];

afterEach(async () => {
  for (const b of bots.splice(0)) await b.stop();
  await ledger?.close();
  ledger = undefined;
  for (const t of temps.splice(0)) t.cleanup();
});

function temp(): string {
  const t = tempDir();
  temps.push(t);
  return t.dir;
}

describe('replicas', () => {
  it(
    'two bots with the same rules on the same participant produce each effect once',
    { timeout: 60_000 },
    async () => {
      ledger = await startTestLedger(2001);
      const a = await startInProcessBot(ledger, { stateDir: temp(), seed: 1 });
      const b = await startInProcessBot(ledger, { stateDir: temp(), seed: 2 });
      bots.push(a, b);
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
      expect((a.submitOutcomes.get('ok') ?? 0) + (b.submitOutcomes.get('ok') ?? 0)).toBeGreaterThan(
        intents,
      );
      const outcomes = await completionOutcomes(ledger);
      expect(outcomes.get('OK')).toBe(intents);
      const turnedAway =
        (outcomes.get('DUPLICATE_COMMAND') ?? 0) +
        (a.submitOutcomes.get('SUBMISSION_ALREADY_IN_FLIGHT') ?? 0) +
        (b.submitOutcomes.get('SUBMISSION_ALREADY_IN_FLIGHT') ?? 0);
      expect(turnedAway).toBeGreaterThan(intents / 2);
    },
  );
});

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
    async () => {
      ledger = await startTestLedger(2002);
      const files = readdirSync(RULES_DIR)
        .filter((f) => f.endsWith('.yaml'))
        .map((f) => ({ path: join(RULES_DIR, f), text: readFileSync(join(RULES_DIR, f), 'utf8') }));
      files.push({ path: 'cancel-as-payer.yaml', text: CANCEL_AS_PAYER });
      const rules = loadRulesOrThrow(files, { parties: ledger.parties });
      const bot = await startInProcessBot(ledger, { stateDir: temp(), seed: 3, rules });
      bots.push(bot);
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
    },
  );
});

describe('pruning', () => {
  it(
    'pruned past the checkpoint while stopped: a loud warning, then it carries on from the ledger end',
    { timeout: 60_000 },
    async () => {
      ledger = await startTestLedger(2003);
      const dir = temp();
      const plan = invoicePlan(90, 2003);
      const [first, missed, later] = [plan.slice(0, 30), plan.slice(30, 60), plan.slice(60)];

      const bot1 = await startInProcessBot(ledger, { stateDir: dir, seed: 4 });
      bots.push(bot1);
      await issueInvoices(ledger, first, 2);
      const e1 = expectedEffects(first);
      await waitForEffects(ledger, e1, 30_000);
      await waitFor(() => bot1.states(), allTerminal, 15_000, 'all terminal');
      await bot1.stop();

      await issueInvoices(ledger, missed, 2);
      const end = await ledger.client.ledgerEnd();
      await ledger.prune(end);

      const logger = recordingLogger();
      const bot2 = await startInProcessBot(ledger, { stateDir: dir, seed: 5, logger });
      bots.push(bot2);
      // "From the ledger end" is the end when the bot finds out; issue the rest after that.
      await waitFor(
        () => bot2.bot.metrics.prunedRestarts,
        (n) => n > 0,
        10_000,
        'the pruned restart',
      );
      await issueInvoices(ledger, later, 2);
      const e3 = expectedEffects(later);
      // The invoices issued while the bot was down and pruned away are not evaluated: they stay
      // open and get no audit record. Everything before and after is handled exactly once.
      const expected = {
        seen: first.length + later.length,
        receipts: e1.receipts + e3.receipts,
        payments: 0,
        invoices: e1.invoices + e3.invoices + missed.length,
      };
      expect(await waitForEffects(ledger, expected, 30_000)).toMatchObject({
        ...expected,
        duplicates: [],
      });
      expect(bot2.bot.metrics.prunedRestarts).toBe(1);
      const loud = logger.lines.filter(
        (l) => l.level === 'error' && l.fields.errorCode === 'PARTICIPANT_PRUNED_DATA_ACCESSED',
      );
      expect(loud).toHaveLength(1);
      expect(loud[0]?.msg).toMatch(/PRUNED/);
      expect(loud[0]?.fields.toOffset).toBeGreaterThanOrEqual(end);
      expect(bot2.bot.state).toBe('running');
    },
  );

  it(
    'intents still open when the pruning happened: resubmitted under a dedup duration, each effect once',
    { timeout: 60_000 },
    async () => {
      ledger = await startTestLedger(2004);
      const dir = temp();
      // Few enough that every intent is out at once (per-rule concurrency 16).
      const plan = invoicePlan(14, 2004);
      await issueInvoices(ledger, plan, 3);
      // The bot submits, but the participant only processes each submission 2.5 s later; the bot
      // is stopped meanwhile (short grace), leaving its intents `submitted` in the journal.
      await ledger.faults({ completionDelayMs: [2500, 2500] });
      const bot1 = await startInProcessBot(ledger, {
        stateDir: dir,
        seed: 6,
        start: { kind: 'begin' },
        stopGraceMs: 50,
      });
      bots.push(bot1);
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
      const bot2 = await startInProcessBot(ledger, { stateDir: dir, seed: 7, logger });
      bots.push(bot2);
      const states = await waitFor(() => bot2.states(), allTerminal, 20_000, 'all terminal');
      // Each open intent was resubmitted; its offset anchor was pruned, so the bot fell back to a
      // dedup duration, and the participant recognised the change as already done.
      expect(states.duplicate).toBe(first);
      expect(states['dead-lettered']).toBe(0);
      expect(logger.lines.some((l) => l.fields.errorCode === 'INVALID_DEDUPLICATION_PERIOD')).toBe(
        true,
      );
      // Nothing twice. The Accept events were pruned before the bot saw them, so the payments
      // stay unsettled: the documented limit of pruning.
      await new Promise((r) => setTimeout(r, 300));
      expect(await countContracts(ledger)).toMatchObject({ ...landed, duplicates: [] });
      // After the pruning, not one change was committed for the bot: only duplicates.
      const after = await completionOutcomes(ledger, 'ledgerbot', prunedAt);
      expect(after.get('OK')).toBeUndefined();
      expect(after.get('DUPLICATE_COMMAND')).toBe(first);
    },
  );

  it(
    'an intent that never landed, still open when its offset was pruned: dead-lettered, never submitted blind',
    { timeout: 60_000 },
    async () => {
      // The documented limit: with the justifying offset pruned and the participant refusing a
      // dedup duration that reaches before the pruning, the bot cannot make the ledger guard the
      // change, so it gives up on it (an operator may requeue it) rather than risk a double.
      ledger = await startTestLedger(2005);
      const dir = temp();
      const plan = invoicePlan(4, 2005).map((p) => ({ ...p, currency: 'CHF' })); // audit only
      await issueInvoices(ledger, plan, 1);
      await ledger.faults({ submitErrors: [{ code: 'SEQUENCER_BACKPRESSURE', rate: 1 }] });
      const bot1 = await startInProcessBot(ledger, {
        stateDir: dir,
        seed: 8,
        start: { kind: 'begin' },
      });
      bots.push(bot1);
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

      const bot2 = await startInProcessBot(ledger, { stateDir: dir, seed: 9 });
      bots.push(bot2);
      const states = await waitFor(() => bot2.states(), allTerminal, 20_000, 'all terminal');
      // The invoice at the pruning offset itself is still a valid anchor; the three before it are not.
      expect(states.succeeded).toBe(1);
      expect(states['dead-lettered']).toBe(3);
      for (const letter of bot2.store.listDeadLetters()) {
        expect(JSON.stringify(letter.error)).toContain('INVALID_DEDUPLICATION_PERIOD');
      }
      expect(await countContracts(ledger)).toMatchObject({ seen: 1, duplicates: [] });
    },
  );
});
