import { afterEach, describe, expect, it } from 'vitest';
import {
  allTerminal,
  expectedEffects,
  invoicePlan,
  issueInvoices,
  startInProcessBot,
  startTestLedger,
  tempDir,
  waitFor,
  waitForEffects,
  type InProcessBot,
  type TempDir,
  type TestLedger,
} from './harness.js';

// A Canton participant closes a websocket that carried no frame either way for 60 s (pekko-http's
// idle timeout), and sends nothing on a stream while the ledger is quiet. The sandbox does the
// same with a shortened timeout; the bot's client pings to keep its streams open.

// Pings come ten times per timeout, so an event-loop stall of a loaded machine (the sandbox
// and the bot share this process) cannot pass for an idle stream.
const IDLE_TIMEOUT_MS = 1_500;
const QUIET_MS = 2 * IDLE_TIMEOUT_MS;

let ledger: TestLedger | undefined;
let bot: InProcessBot | undefined;
let temp: TempDir | undefined;

afterEach(async () => {
  await bot?.stop();
  await ledger?.close();
  temp?.cleanup();
  bot = undefined;
  ledger = undefined;
  temp = undefined;
});

function reconnects(b: InProcessBot): number {
  return b.bot.metrics.reconnects.updates + b.bot.metrics.reconnects.completions;
}

/** Starts a bot, lets it handle a few invoices, then leaves the ledger quiet for QUIET_MS. */
async function quietBot(seed: number, pingIntervalMs: number): Promise<InProcessBot> {
  ledger = await startTestLedger(seed, { idleTimeout: `${IDLE_TIMEOUT_MS}ms` });
  temp = tempDir();
  const b = await startInProcessBot(ledger, { stateDir: temp.dir, seed, pingIntervalMs });
  bot = b;
  const plan = invoicePlan(6, seed);
  await issueInvoices(ledger, plan, 2);
  await waitForEffects(ledger, expectedEffects(plan), 15_000);
  await waitFor(() => b.states(), allTerminal, 10_000, 'every intent terminal');
  await new Promise((r) => setTimeout(r, QUIET_MS));
  return b;
}

describe('quiet streams under the participant idle timeout', () => {
  it(
    'with pings more often than the timeout, a quiet ledger costs no reconnect',
    { timeout: 30_000 },
    async () => {
      const b = await quietBot(71, IDLE_TIMEOUT_MS / 10);
      expect(reconnects(b)).toBe(0);
      expect(b.bot.metrics.updatesConnected).toBe(true);
      expect(b.bot.metrics.completionsConnected).toBe(true);
      // And the streams still carry what comes next.
      const more = invoicePlan(4, 72, 'LATE');
      await issueInvoices(ledger!, more, 2);
      await waitForEffects(ledger!, expectedEffects([...invoicePlan(6, 71), ...more]), 15_000);
      expect(reconnects(b)).toBe(0);
    },
  );

  it(
    'without pings the same quiet drops the streams (what the pings prevent)',
    {
      timeout: 30_000,
    },
    async () => {
      const b = await quietBot(73, 0);
      expect(reconnects(b)).toBeGreaterThan(0);
    },
  );
});
