import { expect } from 'vitest';
import { SeededRandom } from '../../src/core/seeded-random.js';
import { isIntentLine, type ChildBot, type LogLine } from './child-bot.js';
import {
  completionOutcomes,
  expectedEffects,
  invoicePlan,
  issueInvoices,
  waitForEffects,
  type TestLedger,
} from './harness.js';

export type KillRestartRun = {
  readonly ledger: TestLedger;
  readonly seed: number;
  /** Starts `ledgerbot run` on the journal under test (killed with the test's scope). */
  readonly start: () => ChildBot;
  /** The journal's pending and submitted intents, read while the bot is down. */
  readonly openIntents: () => Promise<number>;
};

const running = (l: LogLine): boolean => l.msg === 'bot state changed' && l.state === 'running';

/**
 * 150 invoices in three chunks; the bot is SIGKILLed at a seeded point in the middle of the first
 * two chunks' work and restarted. Every effect lands exactly once on the ledger, every change
 * commits once however often it was submitted; the last bot stops on SIGTERM with exit code 0.
 * The caller checks its journal after.
 */
export async function killAndRestartMidStream(run: KillRestartRun): Promise<void> {
  const { ledger, seed } = run;
  const plan = invoicePlan(150, seed);
  const expected = expectedEffects(plan);
  const intents = expected.seen + 2 * expected.receipts;
  const random = new SeededRandom(seed);
  const chunks = [plan.slice(0, 50), plan.slice(50, 100), plan.slice(100)];

  let bot = run.start();
  await bot.waitForLine(running, 20_000, 'the bot running');
  const openAtKill: number[] = [];
  for (const [round, chunk] of chunks.entries()) {
    const issuing = issueInvoices(ledger, chunk, 1 + round);
    if (round < 2) {
      // Kill somewhere in the middle of this chunk's work: after a seeded number of intent
      // state changes (each invoice makes 2 to 6 of them).
      const killAfter = 20 + Math.floor(random.next() * 100);
      let seen = 0;
      await bot.waitForLine(
        (l) => isIntentLine(l) && ++seen >= killAfter,
        30_000,
        `${killAfter} intent state changes`,
      );
      await bot.kill('SIGKILL');
      expect((await bot.exited).signal).toBe('SIGKILL');
      openAtKill.push(await run.openIntents());
      await issuing; // the rest of the chunk lands while the bot is down
      bot = run.start();
      await bot.waitForLine(running, 20_000, 'the restarted bot running');
    } else {
      await issuing;
    }
  }
  // The kills hit work in progress: intents recorded but not finished.
  expect(Math.max(...openAtKill)).toBeGreaterThan(0);
  const counts = await waitForEffects(ledger, expected, 45_000);
  expect(counts).toMatchObject({ ...expected, duplicates: [] });
  // Every change committed exactly once, however often it was submitted.
  const outcomes = await completionOutcomes(ledger);
  expect(outcomes.get('OK')).toBe(intents);

  await bot.kill('SIGTERM');
  expect((await bot.exited).code).toBe(0);
}
