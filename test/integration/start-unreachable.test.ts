import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/start-sandbox.js';
import { withScope, type TestScope } from '../support/test-scope.js';
import { TokenServer } from '../ledger/auth/token-server.js';
import { ensureBuilt, spawnBot, type ChildBot, type LogLine } from './child-bot.js';
import {
  AUDIT_MODEL,
  expectedEffects,
  INVOICES_MODEL,
  invoicePlan,
  issueInvoices,
  RULES_DIR,
  waitFor,
  waitForEffects,
  type TestLedger,
  freePort,
} from './harness.js';

// `ledgerbot run` started while the participant is down: it waits (retrying with backoff),
// /readyz says why, and it proceeds once the participant answers; ledger.startTimeout bounds the
// wait; what retrying cannot fix ends the process at once.

beforeAll(ensureBuilt, 150_000);

const SEED = 7201;

async function sandboxOn(
  scope: TestScope,
  port: number,
  more: Partial<Parameters<typeof startSandbox>[0]> = {},
): Promise<Sandbox> {
  const sandbox = await startSandbox({
    port,
    models: [INVOICES_MODEL, AUDIT_MODEL],
    parties: ['issuer', 'payer'],
    seed: SEED,
    ...more,
  });
  return scope.own(sandbox);
}

/** A sandbox with auth and an admin user, and a token of that user. */
async function adminSandbox(scope: TestScope): Promise<{ sandbox: Sandbox; token: string }> {
  const secret = 'test-secret';
  const sandbox = await sandboxOn(scope, 0, {
    auth: { hs256: secret },
    users: [{ id: 'admin', admin: true }],
  });
  const token = await new SignJWT({ scope: 'daml_ledger_api' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('admin')
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(secret));
  return { sandbox, token };
}

/** The TestLedger the harness helpers need, over a sandbox this test started. */
async function testLedger(scope: TestScope, sandbox: Sandbox): Promise<TestLedger> {
  const client = scope.own(await LedgerClient.create({ url: sandbox.url }));
  const unused = (): Promise<void> => Promise.reject(new Error('not used here'));
  return {
    sandbox,
    url: sandbox.url,
    client,
    parties: { issuer: sandbox.parties.issuer!, payer: sandbox.parties.payer! },
    faults: unused,
    clearFaults: unused,
    prune: unused,
    close: () => Promise.resolve(),
  };
}

function writeConfig(dir: string, lines: { ledger: string[]; parties?: string[] }): string {
  const path = join(dir, 'bot.config.yaml');
  writeFileSync(
    path,
    [
      'ledger:',
      ...lines.ledger.map((l) => `  ${l}`),
      'parties:',
      ...(lines.parties ?? ["  issuer: 'issuer::x'", "  payer: 'payer::x'"]),
      `rules: ['${RULES_DIR}']`,
      `state: { dir: '${join(dir, 'state')}' }`,
      'submission:',
      '  retry: { maxAttempts: 20, initialDelay: 20ms, maxDelay: 200ms, deadline: 2m }',
      'http: { port: 0 }',
      'log: { level: info, pretty: false }',
      '',
    ].join('\n'),
  );
  return path;
}

function start(scope: TestScope, config: string): ChildBot {
  const bot = spawnBot(config);
  return scope.defer(bot, () => bot.kill('SIGKILL'));
}

const retrying = (l: LogLine): boolean => l.msg === 'the participant does not answer; retrying';

async function opsUrl(bot: ChildBot): Promise<string> {
  const line = await bot.waitForLine(
    (l) => l.msg === 'ops server listening',
    20_000,
    'the ops server',
  );
  return String(line.url);
}

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

describe('ledgerbot run with the participant down at start', () => {
  it(
    'waits with /readyz 503 and the reason, then runs once the participant answers',
    { timeout: 90_000 },
    () =>
      withScope(async (scope) => {
        const dir = scope.tempDir();
        // The party ids a sandbox with this seed allocates, for the config; then the port is free.
        const probe = await sandboxOn(scope, 0);
        const parties = { issuer: probe.parties.issuer!, payer: probe.parties.payer! };
        await probe.stop();
        const port = await freePort();
        const config = writeConfig(dir, {
          ledger: [`url: http://127.0.0.1:${port}`, 'userId: ledgerbot'],
          parties: [`  issuer: '${parties.issuer}'`, `  payer: '${parties.payer}'`],
        });
        const bot = start(scope, config);
        const ops = await opsUrl(bot);
        await bot.waitForLine(retrying, 20_000, 'a retry of the participant');
        const ready = await get(`${ops}/readyz`);
        expect(ready.status).toBe(503);
        expect(ready.body).toMatch(
          new RegExp(
            `^waiting for the participant at http://127\\.0\\.0\\.1:${port} \\(attempt \\d+ failed: .+\\)\\n$`,
          ),
        );
        expect((await get(`${ops}/livez`)).status).toBe(200);
        // Still waiting, several attempts later (backoff, not a give-up).
        let retries = 0;
        await bot.waitForLine((l) => retrying(l) && ++retries >= 2, 20_000, 'two more retries');
        expect(bot.child.exitCode).toBeNull();

        const sandbox = await sandboxOn(scope, port);
        expect(sandbox.parties).toMatchObject(parties);
        await bot.waitForLine(
          (l) => l.msg === 'bot state changed' && l.state === 'running',
          30_000,
          'the bot running',
        );
        expect(bot.lines.some((l) => l.msg === 'the participant answers; starting')).toBe(true);
        // Its parties are the sandbox's: none is said to be unknown.
        expect(bot.lines.filter((l) => String(l.msg).includes('does not know party'))).toEqual([]);
        await waitFor(
          () => get(`${ops}/readyz`),
          (r) => r.status === 200,
          20_000,
          '/readyz 200',
        );

        // It works: every invoice gets its audit record, small ones are accepted and settled.
        const ledger = await testLedger(scope, sandbox);
        const plan = invoicePlan(6, SEED);
        await issueInvoices(ledger, plan);
        const expected = expectedEffects(plan);
        expect(await waitForEffects(ledger, expected, 30_000)).toMatchObject({
          ...expected,
          duplicates: [],
        });

        bot.child.kill('SIGTERM');
        expect((await bot.exited).code).toBe(0);
      }),
  );

  it('exits 1 once ledger.startTimeout has passed, saying so', { timeout: 60_000 }, () =>
    withScope(async (scope) => {
      const dir = scope.tempDir();
      const port = await freePort();
      const config = writeConfig(dir, {
        ledger: [`url: http://127.0.0.1:${port}`, 'userId: ledgerbot', 'startTimeout: 2s'],
      });
      const bot = start(scope, config);
      const exit = await bot.exited;
      expect(exit.code).toBe(1);
      const stderr = bot.other.join('');
      expect(stderr).toContain(`the participant at http://127.0.0.1:${port} did not answer`);
      expect(stderr).toContain('within 2s (ledger.startTimeout');
      expect(bot.lines.some(retrying)).toBe(true);
      expect(
        bot.lines.some(
          (l) => l.msg === 'exiting' && l.why === 'the bot could not start' && l.exitCode === 1,
        ),
      ).toBe(true);
    }),
  );

  it('stops with exit 0 on SIGTERM while it waits', { timeout: 60_000 }, () =>
    withScope(async (scope) => {
      const dir = scope.tempDir();
      const port = await freePort();
      const config = writeConfig(dir, {
        ledger: [`url: http://127.0.0.1:${port}`, 'userId: ledgerbot'],
      });
      const bot = start(scope, config);
      await bot.waitForLine(retrying, 20_000, 'a retry of the participant');
      bot.child.kill('SIGTERM');
      expect((await bot.exited).code).toBe(0);
      expect(bot.other.join('')).toContain('ledgerbot: stopped by SIGTERM before the bot started');
    }),
  );

  it('exits 1 at once when the participant rejects the token', { timeout: 60_000 }, () =>
    withScope(async (scope) => {
      const dir = scope.tempDir();
      const sandbox = await sandboxOn(scope, 0, { auth: { hs256: 'test-secret' } });
      const config = writeConfig(dir, {
        ledger: [`url: ${sandbox.url}`, 'userId: ledgerbot', 'auth: { type: static, token: nope }'],
      });
      const bot = start(scope, config);
      const exit = await bot.exited;
      expect(exit.code).toBe(1);
      // Canton redacts it (NA, a security-sensitive error): the hint names what to check.
      expect(bot.other.join('')).toMatch(/refused the bot: .*check ledger\.auth/);
      expect(bot.lines.some(retrying)).toBe(false);
    }),
  );

  it('exits 2 at once when the participant has no such user', { timeout: 60_000 }, () =>
    withScope(async (scope) => {
      const dir = scope.tempDir();
      const { sandbox, token } = await adminSandbox(scope);
      const config = writeConfig(dir, {
        ledger: [
          `url: ${sandbox.url}`,
          'userId: ghost',
          `auth: { type: static, token: '${token}' }`,
        ],
      });
      const bot = start(scope, config);
      const exit = await bot.exited;
      expect(exit.code).toBe(2);
      expect(bot.other.join('')).toContain('has no user "ghost"');
      expect(bot.lines.some(retrying)).toBe(false);
    }),
  );

  it(
    'takes its token from an OAuth2 token endpoint, and exits 1 when the endpoint refuses it',
    { timeout: 60_000 },
    () =>
      withScope(async (scope) => {
        const { sandbox, token } = await adminSandbox(scope);
        const idp = scope.own(await TokenServer.start());
        idp.reply = (req) =>
          req.form.get('grant_type') === 'client_credentials'
            ? { status: 200, body: JSON.stringify({ access_token: token, expires_in: 3600 }) }
            : { status: 400, body: '{"error":"unsupported_grant_type"}' };
        const oauth2 = `auth: { type: oauth2, tokenUrl: '${idp.url}', clientId: bot, clientSecret: 'idp-secret-42' }`;
        // The token works: the participant answers with what it has, a user the bot lacks.
        const good = start(
          scope,
          writeConfig(scope.tempDir(), {
            ledger: [`url: ${sandbox.url}`, 'userId: ghost', oauth2],
          }),
        );
        expect((await good.exited).code).toBe(2);
        expect(good.other.join('')).toContain('has no user "ghost"');
        expect(idp.requests.length).toBeGreaterThan(0);

        idp.reply = () => ({ status: 401, body: '{"error":"invalid_client"}' });
        const refused = start(
          scope,
          writeConfig(scope.tempDir(), {
            ledger: [`url: ${sandbox.url}`, 'userId: ghost', oauth2],
          }),
        );
        expect((await refused.exited).code).toBe(1);
        const said = refused.other.join('') + JSON.stringify(refused.lines);
        expect(said).toContain(idp.url);
        expect(said).not.toContain('idp-secret-42');
        expect(refused.lines.some(retrying)).toBe(false);
      }),
  );
});
