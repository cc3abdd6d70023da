import { describe, expect, it } from 'vitest';
import { runUntil } from '../support/run-until.js';
import {
  allTerminal,
  expectedEffects,
  invoicePlan,
  issueInvoices,
  startInProcessBot,
  startTestLedger,
  untilEffects,
  waitFor,
  waitForEffects,
  type InProcessBot,
  type TestLedger,
} from './harness.js';

// A Canton participant closes a websocket that carried no frame either way for 60 s (pekko-http's
// idle timeout), and sends nothing on a stream while the ledger is quiet. The sandbox does the
// same with a shortened timeout; the bot's client pings to keep its streams open.

// Pings come ten times per timeout, so an event-loop stall of a loaded machine (the sandbox
// and the bot share this process) cannot pass for an idle stream.
const IDLE_TIMEOUT_MS = 1_500;
const QUIET_MS = 2 * IDLE_TIMEOUT_MS;

function reconnects(b: InProcessBot): number {
  return b.bot.metrics.reconnects.updates + b.bot.metrics.reconnects.completions;
}

/**
 * Starts a sandbox and a bot, lets the bot handle a few invoices to the end, then runs `quiet`
 * on the now quiet ledger; stops and removes everything afterwards.
 */
function quietRun(
  seed: number,
  pingIntervalMs: number,
  quiet: (ledger: TestLedger, b: InProcessBot) => Promise<void>,
): Promise<void> {
  const plan = invoicePlan(6, seed);
  return runUntil({
    start: async (scope) => {
      const ledger = scope.own(
        await startTestLedger(seed, { idleTimeout: `${IDLE_TIMEOUT_MS}ms` }),
      );
      const stateDir = scope.tempDir();
      const bot = scope.own(await startInProcessBot(ledger, { stateDir, seed, pingIntervalMs }));
      await issueInvoices(ledger, plan, 2);
      return { ledger, bot };
    },
    ...untilEffects(expectedEffects(plan), 15_000),
    then: async ({ ledger, bot }) => {
      await waitFor(() => bot.states(), allTerminal, 10_000, 'every intent terminal');
      await quiet(ledger, bot);
    },
  });
}

describe('quiet streams under the participant idle timeout', () => {
  it(
    'with pings more often than the timeout, a quiet ledger costs no reconnect',
    { timeout: 30_000 },
    async () => {
      await quietRun(71, IDLE_TIMEOUT_MS / 10, async (ledger, b) => {
        // That nothing happens can only be checked over a window: twice the idle timeout, which
        // without pings drops the streams (the test below).
        await new Promise((r) => setTimeout(r, QUIET_MS));
        expect(reconnects(b)).toBe(0);
        expect(b.bot.metrics.updatesConnected).toBe(true);
        expect(b.bot.metrics.completionsConnected).toBe(true);
        // And the streams still carry what comes next.
        const more = invoicePlan(4, 72, 'LATE');
        await issueInvoices(ledger, more, 2);
        await waitForEffects(ledger, expectedEffects([...invoicePlan(6, 71), ...more]), 15_000);
        expect(reconnects(b)).toBe(0);
      });
    },
  );

  it(
    'without pings the same quiet drops the streams (what the pings prevent)',
    {
      timeout: 30_000,
    },
    async () => {
      await quietRun(73, 0, async (_ledger, b) => {
        // Waits for the drop rather than for a fixed time: a stalled machine only delays it.
        await waitFor(
          () => reconnects(b),
          (n) => n > 0,
          8 * IDLE_TIMEOUT_MS,
          'a dropped stream',
        );
        expect(reconnects(b)).toBeGreaterThan(0);
      });
    },
  );
});
