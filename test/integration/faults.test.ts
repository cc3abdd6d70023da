import { describe, expect, it } from 'vitest';
import { runUntil } from '../support/run-until.js';
import {
  allTerminal,
  countContracts,
  expectedEffects,
  invoicePlan,
  issueInvoices,
  startInProcessBot,
  startTestLedger,
  untilEffects,
  waitFor,
  type InProcessBot,
  type InProcessBotOptions,
} from './harness.js';

// Each test: a fresh sandbox, one fault on its own, a bot in this process over real sockets,
// and the verdict read from the ledger: every effect there exactly once.

type Scenario = {
  readonly name: string;
  readonly faults: Record<string, unknown>;
  readonly invoices: number;
  /** Set the faults before the invoices are issued (stream faults only: the driver does not retry). */
  readonly faultsWhileIssuing?: boolean;
  readonly bot?: Partial<InProcessBotOptions>;
  /** Checks on the bot's metrics that show the fault really happened (run while it is active). */
  readonly proof: (b: InProcessBot) => void | Promise<void>;
};

const scenarios: Scenario[] = [
  {
    name: 'no fault (baseline)',
    faults: {},
    invoices: 120,
    faultsWhileIssuing: true,
    proof: (b) => expect(b.bot.metrics.submissions).toBeGreaterThan(0),
  },
  {
    name: 'streams closed after a few messages (closeStreamsAfterMessages)',
    faults: { closeStreamsAfterMessages: 7 },
    invoices: 120,
    faultsWhileIssuing: true,
    proof: (b) => {
      expect(b.bot.metrics.reconnects.updates).toBeGreaterThan(3);
      expect(b.bot.metrics.reconnects.completions).toBeGreaterThan(3);
    },
  },
  {
    name: 'streams closed every 150 ms (closeStreamsEveryMs)',
    faults: { closeStreamsEveryMs: 150 },
    invoices: 120,
    faultsWhileIssuing: true,
    proof: async (b) => {
      // The fault drops the streams every 150 ms until it is cleared, however quiet they are. A
      // fast machine issues every invoice within two drops, so wait for the drops rather than
      // count on the invoices taking long enough.
      await waitFor(
        () => b.bot.metrics.reconnects.updates + b.bot.metrics.reconnects.completions,
        (n) => n > 2,
        10_000,
        'more than 2 stream reconnects',
      );
    },
  },
  {
    name: 'synchronous retryable errors (submitErrors: SEQUENCER_BACKPRESSURE, PARTICIPANT_BACKPRESSURE)',
    faults: {
      submitErrors: [
        { code: 'SEQUENCER_BACKPRESSURE', rate: 0.2 },
        { code: 'PARTICIPANT_BACKPRESSURE', rate: 0.1 },
      ],
    },
    invoices: 100,
    proof: (b) => {
      expect(b.submitOutcomes.get('SEQUENCER_BACKPRESSURE')).toBeGreaterThan(5);
      expect(b.submitOutcomes.get('PARTICIPANT_BACKPRESSURE')).toBeGreaterThan(2);
    },
  },
  {
    name: 'asynchronous errors (completionErrors: LOCAL_VERDICT_LOCKED_CONTRACTS, MEDIATOR_SAYS_TX_TIMED_OUT)',
    faults: {
      completionErrors: [
        { code: 'LOCAL_VERDICT_LOCKED_CONTRACTS', rate: 0.15 },
        { code: 'MEDIATOR_SAYS_TX_TIMED_OUT', rate: 0.15 },
      ],
    },
    invoices: 100,
    proof: (b) => expect(b.bot.metrics.submissions).toBeGreaterThan(b.bot.metrics.intentsRecorded),
  },
  {
    name: 'lost submit responses (loseSubmitResponseRate)',
    faults: { loseSubmitResponseRate: 0.25 },
    invoices: 100,
    proof: (b) => expect(b.submitOutcomes.get('transport:reset')).toBeGreaterThan(10),
  },
  {
    name: 'dropped completions (dropCompletionRate, short completionTimeout: resubmit, ledger dedups)',
    faults: { dropCompletionRate: 0.25 },
    invoices: 80,
    bot: { submission: { maxInFlight: 64, completionTimeoutMs: 400 } },
    proof: (b) => {
      expect(b.bot.metrics.submissions).toBeGreaterThan(b.bot.metrics.intentsRecorded);
      expect(b.bot.metrics.intentTransitions.duplicate).toBeGreaterThan(0);
    },
  },
  {
    name: 'delayed completions (completionDelayMs)',
    faults: { completionDelayMs: [20, 400] },
    invoices: 80,
    bot: { submission: { maxInFlight: 64, completionTimeoutMs: 300 } },
    proof: (b) =>
      expect(b.bot.metrics.submissions).toBeGreaterThanOrEqual(b.bot.metrics.intentsRecorded),
  },
];

describe('exactly-once ledger effects under each sandbox fault', () => {
  for (const [i, s] of scenarios.entries()) {
    it(s.name, { timeout: 60_000 }, async () => {
      const seed = 1000 + i;
      const plan = invoicePlan(s.invoices, seed);
      const expected = expectedEffects(plan);
      expect(expected.receipts).toBeGreaterThan(0);
      expect(expected.invoices).toBeGreaterThan(0);
      await runUntil({
        start: async (scope) => {
          const ledger = scope.own(await startTestLedger(seed));
          const stateDir = scope.tempDir();
          if (s.faultsWhileIssuing === true) {
            // The bot follows the stream while the invoices arrive.
            const bot = scope.own(await startInProcessBot(ledger, { stateDir, seed, ...s.bot }));
            await ledger.faults(s.faults);
            await issueInvoices(ledger, plan.slice(0, 40), 1);
            await issueInvoices(ledger, plan.slice(40), 5);
            return { ledger, bot };
          }
          // Submit faults hit every submitter, the test's driver too: issue first, then let the
          // bot read everything from the beginning under the fault.
          await issueInvoices(ledger, plan, 4);
          await ledger.faults(s.faults);
          const bot = scope.own(
            await startInProcessBot(ledger, { stateDir, seed, start: { kind: 'begin' }, ...s.bot }),
          );
          return { ledger, bot };
        },
        ...untilEffects(expected, 45_000),
        then: async ({ ledger, bot: b }, counts) => {
          expect(counts.duplicates).toEqual([]);
          expect(counts).toMatchObject(expected);
          const states = await waitFor(
            () => b.states(),
            allTerminal,
            15_000,
            'every intent terminal',
          );
          // accept + settle per small invoice, one audit record per invoice
          expect(states.succeeded + states.duplicate).toBe(expected.seen + 2 * expected.receipts);
          expect(states['dead-lettered']).toBe(0);
          expect(states.rejected).toBe(0);
          await s.proof(b);
          // Nothing more lands afterwards (a late resubmission would show up here).
          await ledger.clearFaults();
          await new Promise((r) => setTimeout(r, 300));
          expect(await countContracts(ledger)).toMatchObject({ ...expected, duplicates: [] });
        },
      });
    });
  }
});
