import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../src/cli/compose/read-config.js';
import { rootLogger } from '../../src/cli/compose/root-logger.js';
import { startBot, type RunningBot } from '../../src/cli/compose/start-bot.js';
import {
  countContracts,
  issueInvoices,
  RULES_DIR,
  startTestLedger,
  waitFor,
  type TestLedger,
} from './harness.js';
import { TestScope } from '../support/test-scope.js';

const LEDGER_TOKEN = 'static-ledger-token-5d1e0b';
const HTTP_TOKEN = 'ops-http-token-93ac27';

let ledger: TestLedger;
const scope = new TestScope();
let tmp: string;
let rulesDir: string;
let running: RunningBot | undefined;
const lines: string[] = [];

beforeAll(async () => {
  ledger = scope.own(await startTestLedger(7311));
  tmp = scope.tempDir('ledgerbot-ops-reload-');
  rulesDir = join(tmp, 'rules');
  mkdirSync(rulesDir);
  // Only the accept rule at first: accepted invoices leave their Payment unsettled.
  copyFileSync(join(RULES_DIR, 'accept-small-invoices.yaml'), join(rulesDir, 'accept.yaml'));
  const configFile = join(tmp, 'bot.config.yaml');
  writeFileSync(
    configFile,
    [
      'ledger:',
      `  url: ${ledger.url}`,
      '  userId: ledgerbot',
      '  auth: { type: static, token: "${LEDGER_TOKEN}" }',
      'parties:',
      `  issuer: '${ledger.parties.issuer}'`,
      `  payer: '${ledger.parties.payer}'`,
      'rules: rules/',
      'state: { dir: state }',
      'start: ledger-end',
      'http: { port: 0, token: "${HTTP_TOKEN}" }',
      'log: { level: trace }',
      '',
    ].join('\n'),
  );
  const config = await readConfig(configFile, { LEDGER_TOKEN, HTTP_TOKEN });
  const logger = rootLogger(config.log, { out: (t) => lines.push(t), err: (t) => lines.push(t) });
  running = scope.own(await startBot(config, logger));
}, 30_000);

afterAll(() => scope.close());

async function post(path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${running!.ops!.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${HTTP_TOKEN}` },
  });
  return { status: res.status, body: await res.json() };
}

describe('hot reload of the rules (through the run command wiring)', () => {
  it('keeps the old rules when a file is invalid, and widens the filter for a new rule without losing events', async () => {
    const bot = running!.bot;
    const shapeBefore = bot.plan.shape;
    expect(shapeBefore).toBe('TRANSACTION_SHAPE_ACS_DELTA');
    const before = await countContracts(ledger);

    // An invalid file: the reload is refused as a whole, with file:line:col.
    writeFileSync(
      join(rulesDir, 'broken.yaml'),
      'version: 1\nrules:\n  - id: broken\n    on: { created: "#invoices:Invoice:Invoice", party: payer }\n    when: "event.createArgument.amount >"\n    then: []\n',
    );
    const rejected = await post('/rules/reload');
    expect(rejected.status).toBe(422);
    const errors = (rejected.body as { applied: false; errors: string[] }).errors;
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.join('\n')).toMatch(/broken\.yaml:\d+:\d+/);
    expect(bot.rules.rules.map((r) => r.id)).toEqual(['accept-small-invoices']);
    expect(bot.metrics.snapshot().reloads).toEqual({ applied: 0, rejected: 1 });
    // ... and the old rule keeps running.
    await issueInvoices(ledger, [{ reference: 'RL-1', amount: '10.00', currency: 'USD' }]);
    await waitFor(
      () => countContracts(ledger),
      (c) => c.payments - before.payments === 1,
      15_000,
      'RL-1 accepted by the old rules',
    );

    // Fixed, plus a rule on exercises read by another party: a wider filter, another shape.
    writeFileSync(join(rulesDir, 'broken.yaml'), 'version: 1\nrules: []\n');
    copyFileSync(join(RULES_DIR, 'settle-payments.yaml'), join(rulesDir, 'settle.yaml'));
    const applied = await post('/rules/reload');
    expect(applied.status).toBe(200);
    const diff = (applied.body as { applied: boolean; diff: Record<string, unknown> }).diff;
    expect(diff.added).toEqual([
      {
        id: 'settle-accepted-invoices',
        revision: 1,
        hash: expect.stringMatching(/^[0-9a-f]{12}$/) as unknown,
      },
    ]);
    expect([diff.removed, diff.changed, diff.unchanged]).toEqual([[], [], 1]);
    expect(bot.plan.shape).toBe('TRANSACTION_SHAPE_LEDGER_EFFECTS');
    expect(bot.plan.readParties).toHaveLength(2);

    await issueInvoices(ledger, [
      { reference: 'RL-2', amount: '20.00', currency: 'USD' },
      { reference: 'RL-3', amount: '30.00', currency: 'USD' },
    ]);
    // RL-2 and RL-3 are accepted and settled (the new rule saw their exercises); RL-1's payment
    // predates the new rule and stays.
    const after = await waitFor(
      () => countContracts(ledger),
      (c) => c.receipts - before.receipts >= 2 || c.duplicates.length > 0,
      15_000,
      'two receipts',
    );
    expect(after.receipts - before.receipts).toBe(2);
    expect(after.payments - before.payments).toBe(1);
    expect(after.duplicates).toEqual([]);
    expect(bot.metrics.snapshot().reloads).toEqual({ applied: 1, rejected: 1 });

    // The diff was logged by id, revision and hash.
    const reloadLine = lines.find((l) => l.includes('"msg":"rules reloaded"'));
    expect(reloadLine).toBeDefined();
    expect(reloadLine).toMatch(/settle-accepted-invoices@1#[0-9a-f]{12}/);
    expect(lines.some((l) => l.includes('rule reload rejected'))).toBe(true);
  }, 60_000);

  it('tells the last reload by any path once (the endpoint, and SIGHUP and the file watch through RunningBot.reload)', async () => {
    const get = async (path: string): Promise<{ status: number; body: unknown }> => {
      const res = await fetch(`${running!.ops!.url}${path}`, {
        headers: { authorization: `Bearer ${HTTP_TOKEN}` },
      });
      return { status: res.status, body: await res.json() };
    };
    type Reload = { revision: number; last: { applied: boolean; errors?: string[] } | null };
    // The first test made one refused and one applied reload through POST /rules/reload.
    const after = (await get('/reload')).body as Reload;
    expect(after.revision).toBe(2);
    expect(after.last).toMatchObject({ applied: true });
    // SIGHUP and the file watch call RunningBot.reload.
    writeFileSync(join(rulesDir, 'broken.yaml'), 'version: 1\nrules:\n  - id: 5\n');
    try {
      expect((await running!.reload()).applied).toBe(false);
      const refused = (await get('/reload')).body as Reload;
      expect(refused.revision).toBe(2);
      expect(refused.last?.applied).toBe(false);
      expect(refused.last?.errors?.join('\n')).toMatch(/broken\.yaml:\d+:\d+/);
    } finally {
      writeFileSync(join(rulesDir, 'broken.yaml'), 'version: 1\nrules: []\n');
    }
    expect((await running!.reload()).applied).toBe(true);
    expect(((await get('/reload')).body as Reload).revision).toBe(3);
    // The run command's wiring gives the ops server explain: it reads the participant.
    const explained = await get('/explain?offset=1');
    expect([200, 404, 422]).toContain(explained.status);
    expect(JSON.stringify(explained.body)).not.toContain('not available');
  });

  it('pauses and resumes through the endpoints of the run command', async () => {
    expect((await post('/rules/accept-small-invoices/pause')).status).toBe(200);
    expect(running!.bot.ruleStatus().find((r) => r.id === 'accept-small-invoices')?.state).toBe(
      'paused',
    );
    expect((await post('/rules/accept-small-invoices/resume')).status).toBe(200);
  });

  it('never writes a token to the logs', async () => {
    // A careless component logging headers or a config would still be redacted.
    const logger = rootLogger(
      { level: 'trace', pretty: false },
      { out: (t) => lines.push(t), err: (t) => lines.push(t) },
    );
    logger.info({ headers: { authorization: `Bearer ${HTTP_TOKEN}` } }, 'headers');
    logger.info({ auth: { type: 'static', token: LEDGER_TOKEN } }, 'auth');
    logger.info({ http: { token: HTTP_TOKEN } }, 'http');
    const res = await fetch(`${running!.ops!.url}/status`, {
      headers: { authorization: `Bearer ${HTTP_TOKEN}` },
    });
    expect(res.status).toBe(200);
    await res.body?.cancel();
    const out = lines.join('');
    expect(out.length).toBeGreaterThan(1000);
    expect(out).toContain('[redacted]');
    expect(out).not.toContain(LEDGER_TOKEN);
    expect(out).not.toContain(HTTP_TOKEN);
  });
});
