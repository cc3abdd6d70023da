import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/core/seeded-random.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import {
  ensureBuilt,
  isIntentLine,
  spawnBot,
  writeBotConfig,
  type ChildBot,
  type LogLine,
} from './child-bot.js';
import {
  completionOutcomes,
  countContracts,
  expectedEffects,
  invoicePlan,
  issueInvoices,
  startTestLedger,
  tempDir,
  waitForEffects,
  type TempDir,
  type TestLedger,
} from './harness.js';

// `ledgerbot run` as a real process, killed and restarted, against a sandbox in this process.

let ledger: TestLedger | undefined;
let temp: TempDir | undefined;
const children: ChildBot[] = [];

beforeAll(ensureBuilt, 150_000);

afterEach(async () => {
  for (const c of children.splice(0)) await c.kill('SIGKILL');
  await ledger?.close();
  temp?.cleanup();
  ledger = undefined;
  temp = undefined;
});

function start(config: string): ChildBot {
  const bot = spawnBot(config);
  children.push(bot);
  return bot;
}

const running = (l: LogLine): boolean => l.msg === 'bot state changed' && l.state === 'running';

function openIntents(stateDir: string): number {
  const store = openSqliteStore({ dir: stateDir, readonly: true });
  try {
    const states = store.countByState();
    return states.pending + states.submitted;
  } finally {
    store.close();
  }
}

/** commandIds of the intents a run submitted (a `→ submitted` log line). */
function submittedIds(lines: readonly LogLine[]): Set<string> {
  return new Set(
    lines.filter((l) => isIntentLine(l) && l.state === 'submitted').map((l) => String(l.commandId)),
  );
}

describe('ledgerbot run as a child process', () => {
  it(
    'SIGKILL at seeded random points mid-stream, restart: every effect exactly once',
    { timeout: 120_000 },
    async () => {
      ledger = await startTestLedger(3001);
      temp = tempDir();
      const stateDir = `${temp.dir}/state`;
      const config = writeBotConfig(ledger, temp.dir, { stateDir });
      const plan = invoicePlan(150, 3001);
      const expected = expectedEffects(plan);
      const intents = expected.seen + 2 * expected.receipts;
      const random = new SeededRandom(3001);
      const chunks = [plan.slice(0, 50), plan.slice(50, 100), plan.slice(100)];

      let bot = start(config);
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
          openAtKill.push(openIntents(stateDir));
          await issuing; // the rest of the chunk lands while the bot is down
          bot = start(config);
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
      const store = openSqliteStore({ dir: stateDir, readonly: true });
      try {
        const states = store.countByState();
        expect(states.pending + states.submitted).toBe(0);
        expect(states['dead-lettered'] + states.rejected).toBe(0);
      } finally {
        store.close();
      }
    },
  );

  it(
    'SIGTERM while intents are in flight: drains, exits 0, saves the checkpoint; the restart submits nothing twice',
    { timeout: 90_000 },
    async () => {
      ledger = await startTestLedger(3002);
      temp = tempDir();
      const stateDir = `${temp.dir}/state`;
      const config = writeBotConfig(ledger, temp.dir, { stateDir, completionTimeout: '10s' });
      const plan = invoicePlan(80, 3002);
      const expected = expectedEffects(plan);
      const intents = expected.seen + 2 * expected.receipts;

      const first = start(config);
      await first.waitForLine(running, 20_000, 'the bot running');
      // Completions come late, so submissions are out when the signal arrives.
      await ledger.faults({ completionDelayMs: [150, 400] });
      const issuing = issueInvoices(ledger, plan, 4);
      let submitted = 0;
      await first.waitForLine(
        (l) => isIntentLine(l) && l.state === 'submitted' && ++submitted >= 30,
        30_000,
        '30 submissions',
      );
      first.child.kill('SIGTERM');
      const exit = await first.exited;
      expect(exit.code).toBe(0);
      await issuing;
      expect(first.lines.some((l) => l.msg === 'signal received, stopping')).toBe(true);
      expect(first.lines.some((l) => l.msg === 'bot state changed' && l.state === 'stopped')).toBe(
        true,
      );
      // It drained: what it submitted got its outcome before the exit.
      const store = openSqliteStore({ dir: stateDir, readonly: true });
      let terminalAtStop: Set<string>;
      let checkpoint: number | undefined;
      try {
        checkpoint = store.checkpoint();
        const all = store.listIntents({ limit: 10_000 });
        terminalAtStop = new Set(
          all
            .filter((i) => i.state !== 'pending' && i.state !== 'submitted')
            .map((i) => i.commandId),
        );
        expect(all.filter((i) => i.state === 'submitted')).toEqual([]);
      } finally {
        store.close();
      }
      expect(checkpoint).toBeGreaterThan(0);
      expect(terminalAtStop.size).toBeGreaterThan(0);
      const completedBefore = (await countContracts(ledger)).seen;
      expect(completedBefore).toBeLessThan(expected.seen); // it really stopped mid-stream

      await ledger.clearFaults();
      const second = start(config);
      await second.waitForLine(running, 20_000, 'the restarted bot running');
      const counts = await waitForEffects(ledger, expected, 45_000);
      expect(counts).toMatchObject({ ...expected, duplicates: [] });
      const startLine = second.lines.find((l) => l.msg === 'bot starting');
      expect(startLine?.startOffset).toBe(checkpoint);
      // Nothing finished before the stop was submitted again.
      const resubmitted = [...submittedIds(second.lines)].filter((id) => terminalAtStop.has(id));
      expect(resubmitted).toEqual([]);
      expect((await completionOutcomes(ledger)).get('OK')).toBe(intents);
      await second.kill('SIGTERM');
      expect((await second.exited).code).toBe(0);
    },
  );
  it(
    'SIGHUP reloads the rules in the running process and keeps it running',
    { timeout: 60_000 },
    async () => {
      ledger = await startTestLedger(3003);
      temp = tempDir();
      const stateDir = `${temp.dir}/state`;
      const config = writeBotConfig(ledger, temp.dir, { stateDir });
      const bot = start(config);
      await bot.waitForLine(running, 20_000, 'the bot running');
      bot.child.kill('SIGHUP');
      await bot.waitForLine(
        (l) => l.msg === 'reloading the rules' && l.trigger === 'SIGHUP',
        10_000,
        'a reload triggered by SIGHUP',
      );
      await bot.waitForLine(
        (l) => l.msg === 'rules reloaded: no change',
        10_000,
        'the reload result',
      );
      // Still serving after the reload: an invoice is handled as before.
      const plan = invoicePlan(4, 3003);
      await issueInvoices(ledger, plan, 2);
      await waitForEffects(ledger, expectedEffects(plan), 30_000);
      bot.child.kill('SIGTERM');
      expect((await bot.exited).code).toBe(0);
    },
  );
});
