import { describe, expect, it } from 'vitest';
import { runUntil } from '../support/run-until.js';
import {
  allTerminal,
  countContracts,
  expectedEffects,
  invoicePlan,
  issueInvoices,
  settled,
  startReplica,
  startTestLedger,
  untilEffects,
  waitFor,
  type InProcessBot,
} from './harness.js';

// Canton interprets a command before it deduplicates it: resubmitting a consuming exercise whose
// earlier attempt committed is refused with CONTRACT_NOT_FOUND (its input is archived), not
// DUPLICATE_COMMAND. The fixture rules' accept (createAndExercise consuming the invoice) and
// settle (exercise consuming the payment) are such commands. Under lost responses and dropped
// completions, and on a second replica replaying everything its twin already did, every intent
// whose command committed must end `succeeded` (or `duplicate`), never `rejected`.

/** The journal's rejected intents, with their last error, for a readable failure. */
const rejected = (b: InProcessBot): unknown[] =>
  b.store.listIntents({ states: ['rejected'] }).map((r) => ({
    commandId: r.commandId,
    ruleId: r.ruleId,
    lastError: r.lastError,
  }));

describe('consuming commands resubmitted after they committed', () => {
  it(
    'under lost responses and dropped completions, and on a replica replaying from the beginning, no committed intent is rejected',
    { timeout: 90_000 },
    async () => {
      const seed = 3101;
      const plan = invoicePlan(60, seed);
      const expected = expectedEffects(plan);
      const intents = expected.seen + 2 * expected.receipts;
      expect(expected.receipts).toBeGreaterThan(10);
      await runUntil({
        start: async (scope) => {
          const ledger = scope.own(await startTestLedger(seed));
          // Issued before the faults: the driver does not retry.
          await issueInvoices(ledger, plan, 3);
          await ledger.faults({
            loseSubmitResponseRate: 0.3,
            dropCompletionRate: 0.3,
            completionDelayMs: [0, 150],
          });
          // Replica a: reads from the beginning under the faults.
          const a = await startReplica(scope, ledger, 31);
          return { ledger, a };
        },
        ...untilEffects(expected, 45_000),
        then: async ({ ledger: l, a }, counts, scope) => {
          expect(counts.duplicates).toEqual([]);
          expect(counts).toMatchObject(expected);
          const aStates = await waitFor(
            () => a.states(),
            allTerminal,
            20_000,
            'replica a terminal',
          );
          expect(rejected(a)).toEqual([]);
          expect(aStates['dead-lettered']).toBe(0);
          expect(aStates.succeeded + aStates.duplicate).toBe(intents);
          // The faults really hit it: lost responses and resubmissions over committed commands.
          expect(a.submitOutcomes.get('transport:reset') ?? 0).toBeGreaterThan(5);
          expect(a.bot.metrics.submissions).toBeGreaterThan(intents);

          // Replica b: its own journal, the same rules and user, replaying from the beginning
          // while the faults go on. Everything it derives was committed by a.
          const b = await startReplica(scope, l, 32);
          const bStates = await waitFor(
            () => b.states(),
            settled(intents),
            30_000,
            'replica b terminal',
          );
          expect(rejected(b)).toEqual([]);
          expect(bStates['dead-lettered']).toBe(0);
          expect(bStates.succeeded + bStates.duplicate).toBe(intents);
          // b's commands were all refused or answered as a's: DUPLICATE_COMMAND for the creates,
          // CONTRACT_NOT_FOUND / LOCAL_VERDICT_INACTIVE_CONTRACTS for the consuming ones on a
          // 3.5-faithful sandbox, each then found committed by its commandId (or a's success
          // completion, replayed on the shared user's completion stream).
          expect(b.bot.metrics.earlierCommitsFound + bStates.duplicate).toBeGreaterThan(0);
          expect(
            b.bot.metrics.earlierCommitsFound + a.bot.metrics.earlierCommitsFound,
          ).toBeGreaterThan(0);

          // Nothing more lands: each effect once.
          await l.clearFaults();
          await new Promise((r) => setTimeout(r, 300));
          expect(await countContracts(l)).toMatchObject({ ...expected, duplicates: [] });
        },
      });
    },
  );
});
