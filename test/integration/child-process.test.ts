import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import { withScope, type TestScope } from '../support/test-scope.js';
import { killAndRestartMidStream } from './kill-restart.js';
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
  RULES_DIR,
  startTestLedger,
  waitForEffects,
} from './harness.js';

// `ledgerbot run` as a real process, killed and restarted, against a sandbox in this process.

beforeAll(ensureBuilt, 150_000);

/** Spawns `ledgerbot run`, killed (SIGKILL) when the test's scope closes if still alive. */
function start(scope: TestScope, config: string): ChildBot {
  const bot = spawnBot(config);
  return scope.defer(bot, () => bot.kill('SIGKILL'));
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

/**
 * A rules directory of symlinks into a sources directory. Editing a source changes what the
 * next reload reads without touching the watched directory (a checkout linked into place), so
 * SIGHUP is the one thing that triggers the reload.
 */
function linkedRules(
  dir: string,
  files: Readonly<Record<string, string>>,
): { rulesDir: string; write(name: string, text: string): void } {
  const rulesDir = join(dir, 'rules');
  const sources = join(dir, 'rule-sources');
  mkdirSync(rulesDir);
  mkdirSync(sources);
  for (const [name, text] of Object.entries(files)) {
    writeFileSync(join(sources, name), text);
    symlinkSync(join(sources, name), join(rulesDir, name));
  }
  return { rulesDir, write: (name, text) => writeFileSync(join(sources, name), text) };
}

const fixtureRule = (name: string): string => readFileSync(join(RULES_DIR, name), 'utf8');
const NO_RULES = 'version: 1\nrules: []\n';

/** Sends SIGHUP and returns the outcome line of the reload it triggered. */
async function reloadBySighup(bot: ChildBot): Promise<{ result: LogLine; from: number }> {
  const before = bot.lines.length;
  bot.child.kill('SIGHUP');
  const hup = await bot.waitForLine(
    (l) => l.msg === 'reloading the rules' && l.trigger === 'SIGHUP',
    10_000,
    'a reload triggered by SIGHUP',
  );
  const from = Math.max(before, bot.lines.indexOf(hup));
  const result = await bot.waitForLine(
    (l) =>
      bot.lines.indexOf(l) > from &&
      typeof l.msg === 'string' &&
      (l.msg.startsWith('rules reloaded') || l.msg.startsWith('rule reload rejected')),
    10_000,
    'the reload result',
  );
  return { result, from };
}

describe('ledgerbot run as a child process', () => {
  it(
    'SIGKILL at seeded random points mid-stream, restart: every effect exactly once',
    { timeout: 120_000 },
    () =>
      withScope(async (scope) => {
        const ledger = scope.own(await startTestLedger(3001));
        const temp = scope.tempDir();
        const stateDir = `${temp}/state`;
        const config = writeBotConfig(ledger, temp, { stateDir });
        await killAndRestartMidStream({
          ledger,
          seed: 3001,
          start: () => start(scope, config),
          openIntents: () => Promise.resolve(openIntents(stateDir)),
        });
        const store = openSqliteStore({ dir: stateDir, readonly: true });
        try {
          const states = store.countByState();
          expect(states.pending + states.submitted).toBe(0);
          expect(states['dead-lettered'] + states.rejected).toBe(0);
        } finally {
          store.close();
        }
      }),
  );

  it(
    'SIGTERM while intents are in flight: drains, exits 0, saves the checkpoint; the restart submits nothing twice',
    { timeout: 90_000 },
    () =>
      withScope(async (scope) => {
        const ledger = scope.own(await startTestLedger(3002));
        const temp = scope.tempDir();
        const stateDir = `${temp}/state`;
        const config = writeBotConfig(ledger, temp, { stateDir, completionTimeout: '10s' });
        const plan = invoicePlan(80, 3002);
        const expected = expectedEffects(plan);
        const intents = expected.seen + 2 * expected.receipts;

        const first = start(scope, config);
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
        expect(
          first.lines.some((l) => l.msg === 'bot state changed' && l.state === 'stopped'),
        ).toBe(true);
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
        const second = start(scope, config);
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
      }),
  );
  it(
    'SIGHUP reloads the rules in the running process and keeps it running',
    { timeout: 60_000 },
    () =>
      withScope(async (scope) => {
        const ledger = scope.own(await startTestLedger(3003));
        const temp = scope.tempDir();
        const stateDir = `${temp}/state`;
        const config = writeBotConfig(ledger, temp, { stateDir });
        const bot = start(scope, config);
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
      }),
  );

  it(
    'SIGHUP after an edit: logs the diff (added, removed, changed) and the new rules fire',
    { timeout: 90_000 },
    () =>
      withScope(async (scope) => {
        const ledger = scope.own(await startTestLedger(3004));
        const temp = scope.tempDir();
        const stateDir = `${temp}/state`;
        const accept = fixtureRule('accept-small-invoices.yaml');
        const rules = linkedRules(temp, {
          'accept.yaml': accept,
          'settle.yaml': fixtureRule('settle-payments.yaml'),
          'audit.yaml': NO_RULES,
        });
        const config = writeBotConfig(ledger, temp, { stateDir, rules: rules.rulesDir });
        const bot = start(scope, config);
        await bot.waitForLine(running, 20_000, 'the bot running');
        // The old rules: a small invoice is accepted and settled, and nothing is audited.
        await issueInvoices(ledger, [{ reference: 'HUP-0', amount: '10.00', currency: 'USD' }]);
        await waitForEffects(ledger, { seen: 0, receipts: 1, payments: 0, invoices: 0 }, 30_000);

        const changedAccept = accept.replace('concurrency: 16', 'concurrency: 8');
        expect(changedAccept).not.toBe(accept);
        rules.write('audit.yaml', fixtureRule('audit-invoices.yaml'));
        rules.write('accept.yaml', changedAccept);
        rules.write('settle.yaml', NO_RULES);
        const { result, from } = await reloadBySighup(bot);
        expect(result.msg).toBe('rules reloaded');
        const version = (id: string): RegExp => new RegExp(`^${id}@1#[0-9a-f]{12}$`);
        expect(result.added).toEqual([expect.stringMatching(version('audit-invoices'))]);
        expect(result.removed).toEqual([
          expect.stringMatching(version('settle-accepted-invoices')),
        ]);
        expect(result.changed).toEqual([expect.stringMatching(version('accept-small-invoices'))]);
        expect(result.unchanged).toBe(0);

        // The new set: both invoices are audited, the small one accepted but no longer settled.
        await issueInvoices(ledger, [
          { reference: 'HUP-1', amount: '10.00', currency: 'USD' },
          { reference: 'HUP-2', amount: '5000.00', currency: 'USD' },
        ]);
        const counts = await waitForEffects(
          ledger,
          { seen: 2, receipts: 1, payments: 1, invoices: 1 },
          30_000,
        );
        expect(counts.duplicates).toEqual([]);
        // The ledger shows an effect before the bot has read its completion: wait for the lines.
        const audited = (): LogLine[] =>
          bot.lines
            .slice(from)
            .filter(
              (l) => isIntentLine(l) && l.ruleId === 'audit-invoices' && l.state === 'succeeded',
            );
        await bot.waitForLine(() => audited().length >= 2, 15_000, 'both audits succeeded');
        expect(audited()).toHaveLength(2);
        const after = bot.lines.slice(from);
        expect(after.some((l) => isIntentLine(l) && l.ruleId === 'settle-accepted-invoices')).toBe(
          false,
        );
        bot.child.kill('SIGTERM');
        expect((await bot.exited).code).toBe(0);
      }),
  );

  it(
    'SIGHUP after an invalid edit: names file:line:col, and the old rules keep firing',
    { timeout: 90_000 },
    () =>
      withScope(async (scope) => {
        const ledger = scope.own(await startTestLedger(3005));
        const temp = scope.tempDir();
        const stateDir = `${temp}/state`;
        const audit = fixtureRule('audit-invoices.yaml');
        const rules = linkedRules(temp, {
          'accept.yaml': fixtureRule('accept-small-invoices.yaml'),
          'settle.yaml': fixtureRule('settle-payments.yaml'),
          'audit.yaml': audit,
        });
        const config = writeBotConfig(ledger, temp, { stateDir, rules: rules.rulesDir });
        const bot = start(scope, config);
        await bot.waitForLine(running, 20_000, 'the bot running');

        const broken = audit.replace('concurrency: 16', 'concurrency: lots');
        expect(broken).not.toBe(audit);
        const badLine = broken.split('\n').findIndex((l) => l.includes('concurrency: lots')) + 1;
        rules.write('audit.yaml', broken);
        const { result, from } = await reloadBySighup(bot);
        expect(result.msg).toMatch(/^rule reload rejected; the old rules keep running/);
        const problems = bot.lines
          .slice(from)
          .filter((l) => l.msg === 'rule problem')
          .map((l) => String(l.problem));
        expect(problems.length).toBeGreaterThan(0);
        const at = problems
          .map((p) => new RegExp(`^${join(rules.rulesDir, 'audit.yaml')}:(\\d+):(\\d+): `).exec(p))
          .find((m) => m !== null);
        expect(at, problems.join('\n')).toBeDefined();
        expect(Number(at![1])).toBe(badLine);
        expect(Number(at![2])).toBeGreaterThan(0);

        // All three old rules, the audit one included, keep working.
        const plan = invoicePlan(4, 3005);
        await issueInvoices(ledger, plan, 2);
        const counts = await waitForEffects(ledger, expectedEffects(plan), 30_000);
        expect(counts.duplicates).toEqual([]);
        bot.child.kill('SIGTERM');
        expect((await bot.exited).code).toBe(0);
      }),
  );
});
