import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventFormat } from '../../src/ledger/filters.js';
import { runUntil } from '../support/run-until.js';
import {
  invoicePlan,
  issueInvoices,
  loadFixtureRules,
  ROOT,
  settled,
  startReplica,
  startTestLedger,
  waitFor,
  type InProcessBot,
  type TestLedger,
} from './harness.js';

// A create of a keyed template, resubmitted after its first attempt committed, is refused at
// interpretation with DUPLICATE_CONTRACT_KEY (the key is taken, by itself): there is no archived
// input to look at, so the bot finds its own success in the user's completions.

const STAMP = '#audit:Audit:Stamp';
const KEYED_RULES = join(ROOT, 'test/integration/fixtures/keyed-rules');

/** Stamps on the ledger per reference. */
async function stamps(l: TestLedger): Promise<Map<string, number>> {
  const refs = new Map<string, number>();
  for await (const element of l.client.activeContracts({
    activeAtOffset: await l.client.ledgerEnd(),
    eventFormat: eventFormat({ parties: [l.parties.issuer], templates: [STAMP] }),
  })) {
    const entry = element.contractEntry;
    if (entry === undefined || !('JsActiveContract' in entry)) continue;
    const ref = (entry.JsActiveContract.createdEvent.createArgument as { reference: string })
      .reference;
    refs.set(ref, (refs.get(ref) ?? 0) + 1);
  }
  return refs;
}

const unsettled = (b: InProcessBot): unknown[] =>
  b.store.listIntents({ states: ['rejected', 'dead-lettered'] }).map((r) => ({
    commandId: r.commandId,
    state: r.state,
    lastError: r.lastError,
  }));

describe('keyed creates resubmitted after they committed', () => {
  it(
    'under lost responses and dropped completions, and on a replica replaying from the beginning, every stamp once and every intent succeeded',
    { timeout: 90_000 },
    async () => {
      const seed = 3201;
      const plan = invoicePlan(40, seed);
      await runUntil({
        start: async (scope) => {
          const l = scope.own(await startTestLedger(seed));
          await issueInvoices(l, plan, 3);
          await l.faults({
            loseSubmitResponseRate: 0.3,
            dropCompletionRate: 0.3,
            completionDelayMs: [0, 150],
          });
          return {
            l,
            a: await startReplica(scope, l, 41, loadFixtureRules(l.parties, KEYED_RULES)),
          };
        },
        probe: ({ l }) => stamps(l),
        until: (s) => s.size === plan.length,
        what: 'a stamp each',
        timeoutMs: 45_000,
        then: async ({ l, a }, _stamps, scope) => {
          const aStates = await waitFor(
            () => a.states(),
            settled(40),
            20_000,
            'replica a terminal',
          );
          expect(unsettled(a)).toEqual([]);
          expect(aStates.succeeded + aStates.duplicate).toBe(plan.length);
          // Its own repeats met their key (synchronously, or in the completion of a delayed one)
          // and were found committed.
          expect(a.bot.metrics.earlierCommitsFound).toBeGreaterThan(0);

          // Replica b: everything it derives, a has committed; each repeat is refused on its key.
          const b = await startReplica(scope, l, 42, loadFixtureRules(l.parties, KEYED_RULES));
          const bStates = await waitFor(
            () => b.states(),
            settled(40),
            30_000,
            'replica b terminal',
          );
          expect(unsettled(b)).toEqual([]);
          expect(bStates.succeeded + bStates.duplicate).toBe(plan.length);
          expect(b.bot.metrics.earlierCommitsFound).toBeGreaterThan(0);

          await l.clearFaults();
          await new Promise((r) => setTimeout(r, 300));
          const final = await stamps(l);
          expect(final.size).toBe(plan.length);
          expect([...final.values()].every((n) => n === 1)).toBe(true);
        },
      });
    },
  );
});
