import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import type { IntentDetailView, IntentView } from '../../src/runtime/intent-view.js';
import type { OpsServer, ReloadOutcome } from '../../src/runtime/ops/ops-server.js';
import type { ReloadRecord } from '../../src/runtime/ops/reload-history.js';
import type { RuleRow } from '../../src/runtime/ops/rule-rows.js';
import {
  allTerminal,
  AUDIT_RULE_FEW_RETRIES,
  freePort,
  issueInvoices,
  loadFixtureRules,
  RULES_DIR,
  startBotOps,
  startInProcessBot,
  startTestLedger,
  waitFor,
  type InProcessBot,
  type TestLedger,
} from './harness.js';
import { TestScope, withScope } from '../support/test-scope.js';

/*
 * The endpoints the console uses (docs/operations-api.md), over a real socket, against a bot on
 * the sandbox: the page's files, sign-in, cross-site refusals, read-only mode, the rules table,
 * the intent list and detail, the last reload, and the live event stream.
 */

const TOKEN = 'console-token-51d2e8';

/** Once a year: the rules table shows its next slot, and it never runs during the test. */
const YEARLY_RULE = `version: 1
rules:
  - id: yearly-reminders
    description: Remind payers of every invoice once a year
    schedule: { cron: '0 0 1 1 *', timezone: UTC }
    forEach: { activeContracts: '#invoices:Invoice:Invoice', party: issuer }
    then:
      - exercise:
          template: '#invoices:Invoice:Invoice'
          contractId: '\${{ contract.contractId }}'
          choice: Remind
          choiceArgument: { note: 'yearly' }
        actAs: [issuer]
`;

let ledger: TestLedger;
const suite = new TestScope();
let tmp: string;
let n = 0;

beforeAll(async () => {
  ledger = suite.own(await startTestLedger(7417));
  tmp = suite.tempDir('ledgerbot-console-');
}, 30_000);

afterAll(() => suite.close());

type Running = { bot: InProcessBot; ops: OpsServer };

async function run(
  scope: TestScope,
  options: {
    token?: string;
    readOnly?: boolean;
    reload?: () => Promise<ReloadOutcome>;
    explainLedger?: LedgerClient;
    ledgerEndTtlMs?: number;
    allowedHosts?: string[];
  } = {},
): Promise<Running> {
  n += 1;
  const rulesDir = join(tmp, `rules-${n}`);
  mkdirSync(rulesDir);
  for (const f of ['accept-small-invoices.yaml', 'audit-invoices.yaml', 'settle-payments.yaml']) {
    copyFileSync(join(RULES_DIR, f), join(rulesDir, f));
  }
  writeFileSync(join(rulesDir, 'yearly.yaml'), YEARLY_RULE);
  const bot = scope.own(
    await startInProcessBot(ledger, {
      stateDir: join(tmp, `state-${n}`),
      seed: n,
      rules: loadFixtureRules(ledger.parties, rulesDir),
      start: { kind: 'ledger-end' },
    }),
  );
  const ops = scope.own(
    await startBotOps(bot, {
      processMetrics: false,
      ...(options.token === undefined ? {} : { token: options.token }),
      ...(options.readOnly === undefined ? {} : { readOnly: options.readOnly }),
      ...(options.reload === undefined ? {} : { reload: options.reload }),
      ...(options.ledgerEndTtlMs === undefined ? {} : { ledgerEndTtlMs: options.ledgerEndTtlMs }),
      ...(options.allowedHosts === undefined ? {} : { allowedHosts: options.allowedHosts }),
      explain: { ledger: options.explainLedger ?? bot.client, parties: ledger.parties },
    }),
  );
  return { bot, ops };
}

type Reply = { status: number; text: string; json: <T = Json>() => T; headers: Headers };
type Json = Record<string, unknown>;
type Page = { intents: IntentView[]; next: string | null };
type ReloadBody = {
  revision: number;
  rules: { id: string; revision: number; hash: string }[];
  last: ReloadRecord | null;
};
type ExplainBody = {
  updateId: string;
  offset: number;
  recordTime: string;
  events: {
    nodeId: number;
    kind: string;
    templateId: string | null;
    contractId: string | null;
    rules: {
      ruleId: string;
      fired: boolean;
      reason: string | null;
      conditions: { text: string; result: string; detail?: string }[];
      commands: { commandId: string; command: unknown }[];
    }[];
  }[];
};
type StatusBody = Json & {
  rate: { bucketSeconds: number; submitted: number[]; completed: number[] };
};

async function call(
  ops: OpsServer,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Reply> {
  const res = await fetch(`${ops.url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await res.text();
  return { status: res.status, text, json: <T>() => JSON.parse(text) as T, headers: res.headers };
}

const bearer = { authorization: `Bearer ${TOKEN}` };

// Asymmetric matchers, typed as what they match (vitest types them any).
const anyString = expect.any(String) as string;
const anyNumber = expect.any(Number) as number;
const hash12 = expect.stringMatching(/^[0-9a-f]{12}$/) as string;

function errorCode(r: Reply): string {
  return r.json<{ error: { code: string } }>().error.code;
}

async function settled(r: Running): Promise<void> {
  await waitFor(
    async () => ({
      end: await ledger.client.ledgerEnd(),
      processed: r.bot.bot.processedOffset() ?? -1,
      states: r.bot.states(),
    }),
    (s) => s.processed >= s.end && allTerminal(s.states) && r.bot.bot.metrics.inFlight === 0,
    20_000,
    'the bot to catch up',
  );
}

/** A Server-Sent Events stream, its events parsed as they come. */
async function openEvents(ops: OpsServer, headers: Record<string, string> = bearer) {
  const abort = new AbortController();
  const res = await fetch(`${ops.url}/events`, { headers, signal: abort.signal });
  const events: { event: string; data: unknown }[] = [];
  const raw: string[] = [];
  let buffer = '';
  const reading = (async () => {
    if (res.body === null) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          raw.push(block);
          const name = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (name !== undefined && data !== undefined) {
            events.push({ event: name, data: JSON.parse(data) as unknown });
          }
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    status: res.status,
    headers: res.headers,
    events,
    raw,
    /** Waits for an event named `name` (after the first `from`) that `match` accepts. */
    next: async <T = Json>(name: string, match: (data: T) => boolean = () => true, from = 0) => {
      const found = await waitFor(
        () =>
          Promise.resolve(events.slice(from).find((e) => e.event === name && match(e.data as T))),
        (e) => e !== undefined,
        15_000,
        `an event ${name}`,
      );
      return found!.data as T;
    },
    close: async () => {
      abort.abort();
      await reading;
    },
  };
}

describe('the console endpoints against a bot on the sandbox', () => {
  it(
    'serves the page without the token, with a strict content security policy',
    () =>
      withScope(async (scope) => {
        const r = await run(scope, { token: TOKEN });
        const page = await call(r.ops, 'GET', '/');
        expect(page.status).toBe(200);
        expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(page.text).toMatch(/<html/i);
        expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
        expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
        expect(page.headers.get('x-content-type-options')).toBe('nosniff');
        expect(page.headers.get('referrer-policy')).toBe('no-referrer');
        expect(page.headers.get('cache-control')).toBe('no-cache');
        // Every script the page loads is served, as JavaScript.
        const scripts = [...page.text.matchAll(/src="([^"]+\.js)"/g)].map((m) => m[1]!);
        expect(scripts.length).toBeGreaterThan(0);
        for (const src of scripts) {
          const js = await call(r.ops, 'GET', new URL(src, `${r.ops.url}/`).pathname);
          expect(js.status).toBe(200);
          expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
        }
        const missing = await call(r.ops, 'GET', '/console/nope.js');
        expect(missing.status).toBe(404);
        expect(errorCode(missing)).toBe('NOT_FOUND');
        expect((await call(r.ops, 'POST', '/')).status).toBe(405);
      }),
    60_000,
  );

  it(
    'signs in with the token for a session cookie, and out again; a wrong token is refused',
    () =>
      withScope(async (scope) => {
        const r = await run(scope, { token: TOKEN });
        const origin = { origin: r.ops.url };
        expect((await call(r.ops, 'GET', '/session')).json()).toEqual({
          authRequired: true,
          authenticated: false,
          readOnly: false,
        });
        expect((await call(r.ops, 'GET', '/status')).status).toBe(401);
        expect((await call(r.ops, 'GET', '/rules')).status).toBe(401);
        expect((await call(r.ops, 'GET', '/intents')).status).toBe(401);

        const json = { 'content-type': 'application/json', ...origin };
        const wrong = await call(r.ops, 'POST', '/login', json, JSON.stringify({ token: 'no' }));
        expect(wrong.status).toBe(401);
        expect(errorCode(wrong)).toBe('UNAUTHORIZED');
        expect(wrong.headers.get('set-cookie')).toBeNull();
        expect(wrong.text).not.toContain(TOKEN);
        expect((await call(r.ops, 'POST', '/login', json, '{"token": 5}')).status).toBe(400);
        expect((await call(r.ops, 'POST', '/login', json, 'not json')).status).toBe(400);
        const text = { 'content-type': 'text/plain', ...origin };
        expect((await call(r.ops, 'POST', '/login', text, TOKEN)).status).toBe(415);
        const huge = await call(r.ops, 'POST', '/login', json, `{"token":"${'x'.repeat(5000)}"}`);
        expect(huge.status).toBe(413);
        // A login form posted from another site is refused before the token is looked at.
        const forged = await call(
          r.ops,
          'POST',
          '/login',
          { 'content-type': 'application/json', origin: 'http://evil.example' },
          JSON.stringify({ token: TOKEN }),
        );
        expect(forged.status).toBe(403);
        expect(errorCode(forged)).toBe('CROSS_ORIGIN');

        const ok = await call(r.ops, 'POST', '/login', json, JSON.stringify({ token: TOKEN }));
        expect(ok.status).toBe(204);
        const setCookie = ok.headers.get('set-cookie')!;
        expect(setCookie).toMatch(/^ledgerbot_session=[A-Za-z0-9_-]{43}; /);
        expect(setCookie).toContain('HttpOnly');
        expect(setCookie).toContain('SameSite=Strict');
        expect(setCookie).toContain('Path=/');
        expect(setCookie).not.toContain(TOKEN);
        const cookie = { cookie: setCookie.split(';')[0]! };
        expect((await call(r.ops, 'GET', '/session', cookie)).json()).toMatchObject({
          authenticated: true,
        });
        expect((await call(r.ops, 'GET', '/status', cookie)).status).toBe(200);
        expect((await call(r.ops, 'GET', '/rules', cookie)).status).toBe(200);
        // A made-up session id is nobody.
        const forgedCookie = { cookie: `ledgerbot_session=${'A'.repeat(43)}` };
        expect((await call(r.ops, 'GET', '/status', forgedCookie)).status).toBe(401);

        // The form encoding works too.
        const form = await call(
          r.ops,
          'POST',
          '/login',
          { 'content-type': 'application/x-www-form-urlencoded', ...origin },
          new URLSearchParams({ token: TOKEN }).toString(),
        );
        expect(form.status).toBe(204);
        // Loaded over https (a proxy terminating TLS): the cookie is Secure.
        const overTls = await call(
          r.ops,
          'POST',
          '/login',
          { 'content-type': 'application/json', origin: r.ops.url.replace('http:', 'https:') },
          JSON.stringify({ token: TOKEN }),
        );
        expect(overTls.status).toBe(204);
        expect(overTls.headers.get('set-cookie')).toMatch(/; Secure$/);
        expect(setCookie).not.toContain('Secure');

        const out = await call(r.ops, 'POST', '/logout', { ...cookie, ...origin });
        expect(out.status).toBe(204);
        expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
        expect((await call(r.ops, 'GET', '/status', cookie)).status).toBe(401);
        expect((await call(r.ops, 'GET', '/session', cookie)).json()).toMatchObject({
          authenticated: false,
        });
      }),
    60_000,
  );

  it(
    'stops checking tokens from an address after ten wrong ones (429 with Retry-After)',
    () =>
      withScope(async (scope) => {
        const r = await run(scope, { token: TOKEN });
        const json = { 'content-type': 'application/json', origin: r.ops.url };
        const login = await call(r.ops, 'POST', '/login', json, JSON.stringify({ token: TOKEN }));
        const cookie = { cookie: login.headers.get('set-cookie')!.split(';')[0]! };
        for (let i = 0; i < 9; i++) {
          const guess = await call(r.ops, 'GET', '/status', { authorization: `Bearer guess${i}` });
          expect(guess.status).toBe(401);
        }
        const lastGuess = await call(r.ops, 'POST', '/login', json, '{"token":"guess9"}');
        expect(lastGuess.status).toBe(401);
        for (const right of [
          call(r.ops, 'GET', '/status', bearer),
          call(r.ops, 'POST', '/login', json, JSON.stringify({ token: TOKEN })),
        ]) {
          const refused = await right;
          expect(refused.status).toBe(429);
          expect(errorCode(refused)).toBe('TOO_MANY_GUESSES');
          expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
          expect(refused.text).not.toContain(TOKEN);
        }
        // A session opened before keeps working, and the probes need no token.
        expect((await call(r.ops, 'GET', '/status', cookie)).status).toBe(200);
        expect((await call(r.ops, 'GET', '/livez')).status).toBe(200);
      }),
    60_000,
  );

  it(
    'refuses state changes from another site, and cookie changes that do not say where they come from',
    () =>
      withScope(async (scope) => {
        const r = await run(scope, { token: TOKEN });
        const own = { origin: r.ops.url };
        const login = await call(
          r.ops,
          'POST',
          '/login',
          { 'content-type': 'application/json', ...own },
          JSON.stringify({ token: TOKEN }),
        );
        const cookie = { cookie: login.headers.get('set-cookie')!.split(';')[0]! };
        const pause = '/rules/audit-invoices/pause';
        const resume = '/rules/audit-invoices/resume';

        const evil = await call(r.ops, 'POST', pause, { ...cookie, origin: 'http://evil.example' });
        expect(evil.status).toBe(403);
        expect(errorCode(evil)).toBe('CROSS_ORIGIN');
        // Even with the token: a page elsewhere holding it is still another site.
        expect(
          (await call(r.ops, 'POST', pause, { ...bearer, origin: 'http://evil.example' })).status,
        ).toBe(403);
        // The cookie alone, with no Origin, is refused; with Sec-Fetch-Site same-origin it is not.
        const bare = await call(r.ops, 'POST', pause, cookie);
        expect(bare.status).toBe(403);
        expect(errorCode(bare)).toBe('CROSS_ORIGIN');
        expect(r.bot.bot.ruleStatus().find((x) => x.id === 'audit-invoices')?.state).toBe('active');
        expect((await call(r.ops, 'DELETE', '/dead-letters/x', { ...cookie })).status).toBe(403);

        const same = await call(r.ops, 'POST', pause, { ...cookie, ...own });
        expect(same.status).toBe(200);
        expect(r.bot.bot.ruleStatus().find((x) => x.id === 'audit-invoices')?.state).toBe('paused');
        expect(
          (await call(r.ops, 'POST', resume, { ...cookie, 'sec-fetch-site': 'same-origin' }))
            .status,
        ).toBe(200);
        // The CLI and curl: the bearer token and no Origin.
        expect((await call(r.ops, 'POST', pause, bearer)).status).toBe(200);
        expect((await call(r.ops, 'POST', resume, bearer)).status).toBe(200);
        // Reads need no Origin.
        expect((await call(r.ops, 'GET', '/rules', cookie)).status).toBe(200);
      }),
    60_000,
  );

  it(
    'without a token, answers only requests that name the loopback host (no DNS rebinding)',
    () =>
      withScope(async (scope) => {
        const r = await run(scope, { allowedHosts: ['Console.Example.com'] });
        const port = new URL(r.ops.url).port;
        const viaHost = (host: string, method = 'GET', path = '/status') =>
          new Promise<{ status: number; body: string }>((resolve, reject) => {
            const q = request(
              { host: '127.0.0.1', port, method, path, headers: { host } },
              (res) => {
                let body = '';
                res.setEncoding('utf8').on('data', (c: string) => (body += c));
                res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
              },
            );
            q.on('error', reject);
            q.end();
          });
        const rebound = await viaHost(`evil.example:${port}`);
        expect(rebound.status).toBe(403);
        expect(rebound.body).toContain('BAD_HOST');
        expect(
          (await viaHost(`evil.example:${port}`, 'POST', '/rules/audit-invoices/pause')).status,
        ).toBe(403);
        expect(r.bot.bot.ruleStatus().every((x) => x.state !== 'paused')).toBe(true);
        expect((await viaHost(`localhost:${port}`)).status).toBe(200);
        expect((await viaHost(`127.0.0.1:${port}`)).status).toBe(200);
        // A name the config allows (a reverse proxy that keeps the client's Host), any case.
        expect((await viaHost(`console.example.com:${port}`)).status).toBe(200);
        expect((await viaHost('CONSOLE.example.com')).status).toBe(200);
        expect((await viaHost(`other.example.com:${port}`)).status).toBe(403);
        // The probes and the page's files carry nothing to steal.
        expect((await viaHost(`evil.example:${port}`, 'GET', '/livez')).status).toBe(200);
      }),
    60_000,
  );

  it(
    'read-only: every change is refused, reads and sign-in work, and /session and /status say so',
    () =>
      withScope(async (scope) => {
        let reloads = 0;
        const r = await run(scope, {
          token: TOKEN,
          readOnly: true,
          reload: () => {
            reloads += 1;
            return Promise.resolve({
              applied: true,
              diff: { added: [], removed: [], changed: [], unchanged: 4 },
            });
          },
        });
        for (const [method, path] of [
          ['POST', '/rules/audit-invoices/pause'],
          ['POST', '/rules/audit-invoices/resume'],
          ['POST', '/rules/reload'],
          ['POST', '/rules/yearly-reminders/run-slot'],
          ['POST', '/dead-letters/lb-x/retry'],
          ['DELETE', '/dead-letters/lb-x'],
        ] as const) {
          const refused = await call(r.ops, method, path, bearer);
          expect(refused.status, `${method} ${path}`).toBe(403);
          expect(errorCode(refused)).toBe('READ_ONLY');
        }
        expect(reloads).toBe(0);
        expect(r.bot.bot.ruleStatus().every((x) => x.state !== 'paused')).toBe(true);
        // Without the token it is 401 first: read-only says nothing to strangers.
        expect((await call(r.ops, 'POST', '/rules/reload')).status).toBe(401);
        const login = await call(
          r.ops,
          'POST',
          '/login',
          { 'content-type': 'application/json', origin: r.ops.url },
          JSON.stringify({ token: TOKEN }),
        );
        expect(login.status).toBe(204);
        const cookie = { cookie: login.headers.get('set-cookie')!.split(';')[0]! };
        expect((await call(r.ops, 'GET', '/session', cookie)).json()).toEqual({
          authRequired: true,
          authenticated: true,
          readOnly: true,
        });
        expect((await call(r.ops, 'GET', '/status', cookie)).json()).toMatchObject({
          readOnly: true,
        });
        expect((await call(r.ops, 'GET', '/rules', cookie)).status).toBe(200);
      }),
    60_000,
  );

  it(
    'lists the rules with counts, trigger details and next slot; status has the participant, readiness and rate',
    () =>
      withScope(async (scope) => {
        // The ledger end is cached for a minute: still, once the bot has processed past it, it is read
        // again (never a ledger end below the processed offset).
        const r = await run(scope, { ledgerEndTtlMs: 60_000 });
        expect((await call(r.ops, 'GET', '/status')).status).toBe(200);
        await issueInvoices(ledger, [
          { reference: 'CON-1', amount: '10.00', currency: 'USD' },
          { reference: 'CON-2', amount: '5000.00', currency: 'USD' },
        ]);
        await settled(r);
        const { rules, revision } = (await call(r.ops, 'GET', '/rules')).json<{
          rules: RuleRow[];
          revision: number;
        }>();
        expect(revision).toBe(1);
        const byId = new Map(rules.map((x) => [x.id, x]));
        expect([...byId.keys()].sort()).toEqual([
          'accept-small-invoices',
          'audit-invoices',
          'settle-accepted-invoices',
          'yearly-reminders',
        ]);
        const audit = byId.get('audit-invoices')!;
        expect(audit).toMatchObject({
          trigger: 'created',
          template: '#invoices:Invoice:Invoice',
          choice: null,
          cron: null,
          nextSlot: null,
          state: 'active',
          counts: { fired: 2, succeeded: 2, failed: 0, deadLettered: 0 },
          file: expect.stringMatching(/audit-invoices\.yaml$/) as string,
          line: anyNumber,
          revision: 1,
          hash: hash12,
        });
        expect(Date.parse(audit.lastFiredAt!)).toBeGreaterThan(Date.now() - 60_000);
        expect(byId.get('accept-small-invoices')!.counts.fired).toBe(1);
        expect(byId.get('settle-accepted-invoices')).toMatchObject({
          trigger: 'exercised',
          choice: anyString,
        });
        const yearly = byId.get('yearly-reminders')!;
        expect(yearly).toMatchObject({
          description: 'Remind payers of every invoice once a year',
          trigger: 'schedule',
          template: '#invoices:Invoice:Invoice',
          cron: '0 0 1 1 *',
          timezone: 'UTC',
          lastFiredAt: null,
          counts: { fired: 0, succeeded: 0, failed: 0, deadLettered: 0 },
        });
        const next = new Date(yearly.nextSlot!);
        expect([next.getUTCMonth(), next.getUTCDate(), next.getUTCHours()]).toEqual([0, 1, 0]);
        expect(next.getTime()).toBeGreaterThan(Date.now());

        const status = (await call(r.ops, 'GET', '/status')).json<StatusBody>();
        expect(status).toMatchObject({
          readOnly: false,
          participant: { url: ledger.url, version: anyString },
          ready: { ok: true, reason: null },
          intents: { succeeded: anyNumber },
        });
        expect(status.ledgerEnd).toBe(await ledger.client.ledgerEnd());
        expect(status.lag).toBe(0);
        expect(status.rate.bucketSeconds).toBe(5);
        expect(status.rate.submitted).toHaveLength(60);
        expect(status.rate.completed).toHaveLength(60);
        const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
        // CON-1: audit, accept, settle; CON-2: audit.
        expect(sum(status.rate.submitted)).toBe(4);
        expect(sum(status.rate.completed)).toBe(4);
      }),
    60_000,
  );

  it(
    'pages the intents newest first with filters and a cursor, and shows one with its trigger, command and attempts',
    () =>
      withScope(async (scope) => {
        const r = await run(scope);
        await issueInvoices(
          ledger,
          Array.from({ length: 5 }, (_, i) => ({
            reference: `PAGE-${i}`,
            amount: '20.00',
            currency: 'USD',
          })),
        );
        await settled(r);
        // 5 audits, 5 accepts, 5 settles.
        const seen: string[] = [];
        let next: string | null = null;
        let pages = 0;
        do {
          const query: string = next === null ? '' : `&before=${next}`;
          const page = await call(r.ops, 'GET', `/intents?limit=4${query}`);
          expect(page.status).toBe(200);
          const body = page.json<Page>();
          expect(body.intents.length).toBeLessThanOrEqual(4);
          seen.push(...body.intents.map((i) => i.commandId));
          next = body.next;
          pages += 1;
        } while (next !== null && pages < 10);
        expect(pages).toBe(4);
        expect(new Set(seen).size).toBe(15);

        const audits = (await call(r.ops, 'GET', '/intents?ruleId=audit-invoices')).json<Page>();
        expect(audits.intents).toHaveLength(5);
        expect(audits.next).toBeNull();
        expect(audits.intents.every((i) => i.ruleId === 'audit-invoices')).toBe(true);
        const times = audits.intents.map((i) => Date.parse(i.updatedAt));
        expect([...times].sort((a, b) => b - a)).toEqual(times);
        const none = (await call(r.ops, 'GET', '/intents?state=dead-lettered')).json();
        expect(none).toEqual({ intents: [], next: null });
        const done = (await call(r.ops, 'GET', '/intents?state=succeeded&limit=1000')).json<Page>();
        expect(done.intents.length).toBeGreaterThan(0);

        for (const [query, what] of [
          ['state=done', 'state must be one of'],
          ['limit=0', 'limit must be'],
          ['limit=1001', 'limit must be'],
          ['limit=ten', 'limit must be'],
          ['limit=', 'limit must be'],
          ['before=not-a-cursor', 'before must be'],
          [`before=${Buffer.from('[1,2]').toString('base64url')}`, 'before must be'],
        ] as const) {
          const bad = await call(r.ops, 'GET', `/intents?${query}`);
          expect(bad.status, query).toBe(400);
          expect(errorCode(bad)).toBe('BAD_REQUEST');
          expect(bad.json<{ error: { message: string } }>().error.message).toContain(what);
        }

        const id = audits.intents[0]!.commandId;
        const detail = await call(r.ops, 'GET', `/intents/${encodeURIComponent(id)}`);
        expect(detail.status).toBe(200);
        const intent = detail.json<{ intent: IntentDetailView }>().intent;
        expect(intent).toMatchObject({
          commandId: id,
          ruleId: 'audit-invoices',
          revision: 1,
          actAs: [ledger.parties.issuer],
          trigger: { kind: 'event', updateId: anyString, nodeId: anyNumber },
          // The invoice whose creation triggered it, as recorded with the intent.
          event: {
            updateId: anyString,
            offset: intent.offset,
            contractId: anyString,
            templateId: expect.stringMatching(/:Invoice:Invoice$/) as string,
            recordTime: anyString,
          },
          attempts: 1,
          createdAt: anyString,
        });
        expect(JSON.stringify(intent.command)).toContain('#audit:Audit:Seen');
        expect(intent.attemptList).toEqual([
          {
            n: 1,
            submissionId: anyString,
            at: anyString,
            outcome: expect.stringMatching(/^(succeeded|duplicate)$/) as string,
          },
        ]);
        const missing = await call(r.ops, 'GET', '/intents/lb-nope');
        expect(missing.status).toBe(404);
        const malformed = await call(r.ops, 'GET', '/intents/lb-%E0%A4%A');
        expect(malformed.status).toBe(400);
        expect(errorCode(malformed)).toBe('BAD_REQUEST');
      }),
    60_000,
  );

  it(
    'keeps every attempt of an intent: retries, its dead letter, an operator retry, across a restart',
    () =>
      withScope(async (scope) => {
        const stateDir = join(tmp, 'attempts-state');
        const rulesDir = join(tmp, 'attempts-rules');
        mkdirSync(rulesDir);
        writeFileSync(join(rulesDir, 'audit.yaml'), AUDIT_RULE_FEW_RETRIES);
        const rules = loadFixtureRules(ledger.parties, rulesDir);
        const detailOf = async (ops: OpsServer, id: string): Promise<IntentDetailView> =>
          (await call(ops, 'GET', `/intents/${id}`)).json<{ intent: IntentDetailView }>().intent;

        let id = '';
        let before: IntentDetailView | undefined;
        await withScope(async (first) => {
          const bot = first.own(
            await startInProcessBot(ledger, {
              stateDir,
              seed: 91,
              rules,
              start: { kind: 'ledger-end' },
            }),
          );
          const ops = first.own(await startBotOps(bot, { processMetrics: false }));
          // Paused while the invoice is issued: the driver must not meet the fault.
          bot.bot.pauseRule('audit-invoices');
          await issueInvoices(ledger, [{ reference: 'ATT-1', amount: '10.00', currency: 'USD' }]);
          await ledger.faults({ submitErrors: [{ code: 'SEQUENCER_BACKPRESSURE', rate: 1 }] });
          try {
            bot.bot.resumeRule('audit-invoices');
            await waitFor(
              () => Promise.resolve(bot.states()),
              (st) => st['dead-lettered'] === 1,
              20_000,
              'a dead letter',
            );
          } finally {
            await ledger.clearFaults();
          }
          id = bot.store.listDeadLetters()[0]!.intent.commandId;
          const dead = await detailOf(ops, id);
          expect(dead.state).toBe('dead-lettered');
          expect(dead.attemptList.map((a) => [a.n, a.outcome, a.error?.code])).toEqual([
            [1, 'retry', 'SEQUENCER_BACKPRESSURE'],
            [2, 'dead-lettered', 'SEQUENCER_BACKPRESSURE'],
          ]);
          expect(new Set(dead.attemptList.map((a) => a.submissionId)).size).toBe(2);

          expect((await call(ops, 'POST', `/dead-letters/${id}/retry`)).status).toBe(202);
          await waitFor(
            () => detailOf(ops, id),
            (d) => d.state === 'succeeded' || d.state === 'duplicate',
            20_000,
            'the retried intent to land',
          );
          before = await detailOf(ops, id);
          expect(before.attemptList.map((a) => a.n)).toEqual([1, 2, 3]);
          expect(before.attemptList[2]!.outcome).toBe(before.state);
        });

        // Another process on the same state directory shows the same attempts.
        const bot = scope.own(
          await startInProcessBot(ledger, {
            stateDir,
            seed: 92,
            rules,
            start: { kind: 'ledger-end' },
          }),
        );
        const ops = scope.own(await startBotOps(bot, { processMetrics: false }));
        expect((await detailOf(ops, id)).attemptList).toEqual(before!.attemptList);
      }),
    60_000,
  );

  it(
    'tells the last reload by any path',
    () =>
      withScope(async (scope) => {
        let outcome: ReloadOutcome = { applied: false, errors: ['rules.yaml:3:5: bad'] };
        const r = await run(scope, { reload: () => Promise.resolve(outcome) });
        const first = (await call(r.ops, 'GET', '/reload')).json<ReloadBody>();
        expect(first.last).toBeNull();
        expect(first.revision).toBe(1);
        expect(first.rules.map((x) => x.id)).toContain('audit-invoices');
        expect(first.rules[0]).toEqual({
          id: anyString,
          revision: 1,
          hash: hash12,
        });
        expect((await call(r.ops, 'POST', '/rules/reload')).status).toBe(422);
        const rejected = (await call(r.ops, 'GET', '/reload')).json<ReloadBody>();
        expect(rejected.last).toEqual({
          at: anyString,
          applied: false,
          errors: ['rules.yaml:3:5: bad'],
        });
        expect(rejected.revision).toBe(1);
        outcome = {
          applied: true,
          diff: { added: [], removed: [], changed: [], unchanged: 4 },
        };
        expect((await call(r.ops, 'POST', '/rules/reload')).status).toBe(200);
        const applied = (await call(r.ops, 'GET', '/reload')).json<ReloadBody>();
        expect(applied.last).toMatchObject({ applied: true, diff: { unchanged: 4 } });
        expect(applied.revision).toBe(2);
      }),
    60_000,
  );

  it(
    'explains an update by id or offset, rule by rule and condition by condition; every bad request is refused',
    () =>
      withScope(async (scope) => {
        const r = await run(scope);
        await issueInvoices(ledger, [{ reference: 'WHY-1', amount: '5000.00', currency: 'USD' }]);
        await settled(r);
        const audits = (await call(r.ops, 'GET', '/intents?ruleId=audit-invoices')).json<Page>();
        const detail = (await call(r.ops, 'GET', `/intents/${audits.intents[0]!.commandId}`)).json<{
          intent: IntentDetailView;
        }>().intent;
        const updateId = detail.event.updateId!;

        const byId = await call(r.ops, 'GET', `/explain?updateId=${encodeURIComponent(updateId)}`);
        expect(byId.status).toBe(200);
        const body = byId.json<ExplainBody>();
        expect(body.updateId).toBe(updateId);
        expect(body.offset).toBe(detail.offset);
        const created = body.events.find((e) => e.kind === 'created')!;
        expect(created.templateId).toMatch(/:Invoice:Invoice$/);
        expect(created.contractId).toEqual(anyString);
        const rule = (id: string) => created.rules.find((x) => x.ruleId === id)!;
        expect(rule('audit-invoices')).toMatchObject({ fired: true, reason: null });
        expect(rule('audit-invoices').commands).toHaveLength(1);
        expect(JSON.stringify(rule('audit-invoices').commands[0]!.command)).toContain('WHY-1');
        const accept = rule('accept-small-invoices');
        expect(accept.fired).toBe(false);
        expect(accept.reason).toMatch(/^when\[\d\] is false: /);
        expect(accept.conditions.map((c) => c.result)).toContain('false');
        expect(accept.commands).toEqual([]);
        // The settle rule watches exercises: it did not match this event, and says why.
        const settle = rule('settle-accepted-invoices');
        expect(settle.fired).toBe(false);
        expect(settle.reason).toEqual(anyString);

        const byOffset = await call(r.ops, 'GET', `/explain?offset=${detail.offset}`);
        expect(byOffset.status).toBe(200);
        expect(byOffset.json<ExplainBody>().updateId).toBe(updateId);

        for (const query of [
          '',
          'updateId=',
          `updateId=${updateId}&offset=1`,
          'offset=abc',
          'offset=0',
          'offset=-3',
          `updateId=${encodeURIComponent('<img src=x onerror=alert(1)>')}`,
          `updateId=${'a'.repeat(300)}`,
        ]) {
          const bad = await call(r.ops, 'GET', `/explain?${query}`);
          expect(bad.status, query).toBe(400);
          expect(errorCode(bad)).toBe('BAD_REQUEST');
        }
        const unknown = await call(r.ops, 'GET', `/explain?updateId=${'f'.repeat(64)}`);
        expect(unknown.status).toBe(404);
        expect(errorCode(unknown)).toBe('NOT_FOUND');
        expect((await call(r.ops, 'GET', '/explain?offset=999999999')).status).toBe(404);

        // A participant that does not answer: 503.
        const nowhere = scope.own(
          await LedgerClient.create({ url: `http://127.0.0.1:${await freePort()}` }),
        );
        const r2 = await run(scope, { explainLedger: nowhere });
        const down = await call(r2.ops, 'GET', `/explain?updateId=${updateId}`);
        expect(down.status).toBe(503);
        expect(errorCode(down)).toBe('UNAVAILABLE');
      }),
    60_000,
  );

  it(
    'streams status, intents, rules and reloads as Server-Sent Events, within bounds',
    () =>
      withScope(async (scope) => {
        const r = await run(scope, {
          token: TOKEN,
          reload: () =>
            Promise.resolve({
              applied: true,
              diff: { added: [], removed: [], changed: [], unchanged: 4 },
            }),
        });
        const denied = await call(r.ops, 'GET', '/events');
        expect(denied.status).toBe(401);

        const stream = scope.own(await openEvents(r.ops));
        expect(stream.status).toBe(200);
        expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
        const status = await stream.next('status');
        expect(stream.raw[0]).toBe('retry: 2000');
        expect(status).toMatchObject({ state: 'running', readOnly: false });
        expect(status.rules).toBeUndefined();
        expect(status.recentIntents).toBeUndefined();

        await issueInvoices(ledger, [{ reference: 'LIVE-1', amount: '10.00', currency: 'USD' }]);
        const audit = await stream.next<{ intents: IntentView[] }>('intents', (d) =>
          d.intents.some(
            (i) =>
              i.ruleId === 'audit-invoices' && (i.state === 'succeeded' || i.state === 'duplicate'),
          ),
        );
        const intents = audit.intents;
        // Coalesced: one entry per commandId in a message.
        expect(new Set(intents.map((i) => i.commandId)).size).toBe(intents.length);
        const rules = await stream.next<{ rules: RuleRow[] }>('rules', (d) =>
          d.rules.some((x) => x.id === 'audit-invoices' && x.counts.fired === 1),
        );
        expect(rules.rules.every((x) => typeof x.id === 'string')).toBe(true);
        const from = stream.events.length;
        r.bot.bot.pauseRule('accept-small-invoices');
        await stream.next<{ rules: RuleRow[] }>(
          'rules',
          (d) => d.rules.some((x) => x.id === 'accept-small-invoices' && x.state === 'paused'),
          from,
        );
        expect((await call(r.ops, 'POST', '/rules/reload', bearer)).status).toBe(200);
        // The status events follow the ledger end (read at most once a second).
        const end = await ledger.client.ledgerEnd();
        await stream.next<{ ledgerEnd: number | null }>('status', (d) => d.ledgerEnd === end);
        const reload = await stream.next('reload');
        expect(reload).toMatchObject({ applied: true, diff: { unchanged: 4 } });

        // At most 32 streams: the 33rd is refused; closing one makes room.
        const more = [];
        for (let i = 0; i < 31; i++) more.push(scope.own(await openEvents(r.ops)));
        expect(more.every((s) => s.status === 200)).toBe(true);
        const refused = await call(r.ops, 'GET', '/events', bearer);
        expect(refused.status).toBe(503);
        expect(errorCode(refused)).toBe('TOO_MANY_STREAMS');
        await more.pop()!.close();
        await waitFor(
          () => openEvents(r.ops),
          (s) => {
            void s.close();
            return s.status === 200;
          },
          5_000,
          'room for a stream',
        );
      }),
    60_000,
  );
});
