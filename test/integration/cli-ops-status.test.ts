import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeadLetterView } from '../../src/runtime/intent-view.js';
import { readConfig } from '../../src/cli/compose/read-config.js';
import { rootLogger } from '../../src/cli/compose/root-logger.js';
import { startBot, type RunningBot } from '../../src/cli/compose/start-bot.js';
import {
  countContracts,
  issueInvoices,
  ROOT,
  startTestLedger,
  waitFor,
  type TestLedger,
  AUDIT_RULE_FEW_RETRIES,
  freePort,
} from './harness.js';
import { TestScope } from '../support/test-scope.js';
import { cli } from '../support/cli-capture.js';

const TOKEN = 'ops-token-for-the-test';

let ledger: TestLedger;
const scope = new TestScope();
let tmp: string;
let config: string;
let noToken: string;
let port: number;
let running: RunningBot | undefined;

/** A port nothing listens on right now (the OS picks it; the bot binds it right after). */

function writeConfig(name: string, http: string): string {
  const path = join(tmp, name);
  writeFileSync(
    path,
    [
      'ledger:',
      `  url: ${ledger.url}`,
      '  userId: ledgerbot',
      'parties:',
      `  issuer: '${ledger.parties.issuer}'`,
      `  payer: '${ledger.parties.payer}'`,
      'rules: rules/',
      'state: { dir: state }',
      'start: begin',
      http,
      'log: { level: silent }',
      '',
    ].join('\n'),
  );
  return path;
}

async function ops(method: string, path: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}` },
  });
}

async function deadLetters(): Promise<DeadLetterView[]> {
  const r = await cli(['dead-letters', 'list', '--config', config, '--json']);
  expect(r.err).toBe('');
  return JSON.parse(r.out) as DeadLetterView[];
}

beforeAll(async () => {
  ledger = scope.own(await startTestLedger(7303));
  tmp = scope.tempDir('ledgerbot-cli-status-');
  mkdirSync(join(tmp, 'rules'));
  writeFileSync(join(tmp, 'rules', 'audit.yaml'), AUDIT_RULE_FEW_RETRIES);
  port = await freePort();
  config = writeConfig('bot.config.yaml', `http: { port: ${port}, token: ${TOKEN} }`);
  noToken = writeConfig('no-token.yaml', `http: { port: ${port} }`);
  // Two invoices whose audits are turned away (retryable) until the retries run out.
  await issueInvoices(ledger, [
    { reference: 'S-1', amount: '10.00', currency: 'USD' },
    { reference: 'S-2', amount: '20.00', currency: 'USD' },
  ]);
  await ledger.faults({ submitErrors: [{ code: 'SEQUENCER_BACKPRESSURE', rate: 1 }] });
  const logger = rootLogger({ level: 'silent', pretty: false }, { out: () => {}, err: () => {} });
  running = scope.own(await startBot(await readConfig(config), logger));
  await waitFor(
    () => running!.bot.metrics.intentTransitions['dead-lettered'],
    (n) => n === 2,
    20_000,
    'two dead letters',
  );
  await ledger.clearFaults();
}, 60_000);

afterAll(() => scope.close());

describe('ledgerbot status', () => {
  it('prints the running bot as a table: rules, checkpoint, lag, in flight, last intents', async () => {
    const r = await cli(['status', '--config', config]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^bot +running since /m);
    expect(r.out).toMatch(/^stream +connected, 0 reconnect\(s\)$/m);
    expect(r.out).toMatch(/^checkpoint +\d+$/m);
    expect(r.out).toMatch(/^lag +\d+ offset\(s\)$/m);
    expect(r.out).toMatch(/^dead letters +2$/m);
    expect(r.out).toMatch(/^intents +.*2 dead-lettered/m);
    expect(r.out).toMatch(/RULE +REV +TRIGGER +STATE +WHERE/);
    expect(r.out).toMatch(/^audit-invoices +1 +created +active +.*audit\.yaml:\d+$/m);
    expect(r.out).toMatch(
      /^\S+ +audit-invoices +dead-lettered +2 +\d+ +lb-audit-invoices-\S+ +SEQUENCER_BACKPRESSURE/m,
    );
  });

  it('shows a paused rule with the offset it was paused at', async () => {
    expect((await ops('POST', '/rules/audit-invoices/pause')).status).toBe(200);
    try {
      const r = await cli(['status', '--config', config]);
      expect(r.out).toMatch(/^audit-invoices +1 +created +paused \(since offset \d+\)/m);
    } finally {
      expect((await ops('POST', '/rules/audit-invoices/resume')).status).toBe(200);
    }
    expect((await cli(['status', '--config', config])).out).toMatch(/^audit-invoices .* active /m);
  });

  it('--json prints the /status document', async () => {
    const r = await cli(['status', '--config', config, '--json']);
    const doc = JSON.parse(r.out) as { state: string; rules: { id: string }[] };
    expect(doc.state).toBe('running');
    expect(doc.rules.map((x) => x.id)).toEqual(['audit-invoices']);
  });

  it('without the token: exit 1 and says what to set; the token is never printed', async () => {
    const r = await cli(['status', '--config', noToken]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('needs a token: set http.token');
    const wrong = writeConfig('wrong-token.yaml', `http: { port: ${port}, token: not-it }`);
    const w = await cli(['status', '--config', wrong]);
    expect(w.code).toBe(1);
    expect(w.err).toContain('refused the token');
    expect(w.err + r.err).not.toContain(TOKEN);
    expect(w.err).not.toContain('not-it');
  });

  it('bad arguments and a config without http exit 2', async () => {
    expect((await cli(['status', '--config', config, '--bogus'])).code).toBe(2);
    const none = writeConfig('no-http.yaml', '');
    const r = await cli(['status', '--config', none]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('has no http section');
  });
});

describe('ledgerbot dead-letters, through the running bot', () => {
  it('lists and shows them via the ops API', async () => {
    const r = await cli(['dead-letters', 'list', '--config', config]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`2 dead letter(s) (via the running bot at http://127.0.0.1:${port})`);
    expect(r.out).toContain('SEQUENCER_BACKPRESSURE');
    const [first] = await deadLetters();
    const s = await cli(['dead-letters', 'show', first!.commandId, '--config', config]);
    expect(s.code).toBe(0);
    expect(s.out).toContain('"CreateCommand"');
    expect(s.out).toContain('rule        audit-invoices (revision 1)');
  });

  it(
    'retry: the running bot resubmits under the same commandId and it lands once; drop: never',
    { timeout: 30_000 },
    async () => {
      const [retried, dropped] = (await deadLetters()) as [DeadLetterView, DeadLetterView];
      expect((await countContracts(ledger)).seen).toBe(0);
      const r = await cli(['dead-letters', 'retry', retried.commandId, '--config', config]);
      expect(r.code).toBe(0);
      expect(r.out).toContain('the running bot resubmits it under the same commandId now');
      const d = await cli(['dead-letters', 'drop', dropped.commandId, '--config', config]);
      expect(d.code).toBe(0);
      await waitFor(
        () => countContracts(ledger),
        (c) => c.seen >= 1,
        15_000,
        'the retried audit',
      );
      await waitFor(
        () => running!.bot.metrics.intentTransitions.succeeded,
        (n) => n >= 1,
        10_000,
        'the retried intent to succeed',
      );
      // A second retry of the same id finds no dead letter: exit 1, nothing submitted.
      const again = await cli(['dead-letters', 'retry', retried.commandId, '--config', config]);
      expect(again.code).toBe(1);
      expect(again.err).toContain(`there is no dead letter ${retried.commandId}`);
      const counts = await countContracts(ledger);
      expect(counts.seen).toBe(1);
      expect(counts.duplicates).toEqual([]);
      expect(await deadLetters()).toEqual([]);
      const seen = await ledger.client.ledgerEnd();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await countContracts(ledger)).seen).toBe(1);
      expect(await ledger.client.ledgerEnd()).toBe(seen);
    },
  );
});

describe('docs/alerts.yaml', () => {
  it("references only metrics the bot's /metrics serves", async () => {
    const doc = parse(readFileSync(join(ROOT, 'docs/alerts.yaml'), 'utf8')) as {
      groups: { rules: { alert: string; expr: string }[] }[];
    };
    const exprs = doc.groups.flatMap((g) => g.rules.map((r) => r.expr));
    expect(exprs.length).toBeGreaterThanOrEqual(5);
    const referenced = new Set(exprs.flatMap((e) => e.match(/\bledgerbot_[a-z0-9_]+/g) ?? []));
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    const text = await res.text();
    const families = new Set(
      [...text.matchAll(/^# TYPE (\S+) (\w+)$/gm)].flatMap(([, name, type]) =>
        type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!],
      ),
    );
    const missing = [...referenced].filter((m) => !families.has(m));
    expect(missing).toEqual([]);
    // Each alert named in the task is there.
    const names = doc.groups.flatMap((g) => g.rules.map((r) => r.alert));
    for (const alert of [
      'LedgerbotLagGrowing',
      'LedgerbotDeadLetters',
      'LedgerbotRetriesExhausted',
      'LedgerbotStreamDisconnected',
      'LedgerbotRuleErrors',
    ]) {
      expect(names).toContain(alert);
    }
  });
});

/**
 * The Dockerfile's HEALTHCHECK command (exec form), run with node as Docker would. Asynchronous:
 * the bot answering it runs in this process.
 */
async function healthcheck(): Promise<number | null> {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const line = /^HEALTHCHECK .*?CMD (\[.*\])$/m.exec(dockerfile);
  expect(line).not.toBeNull();
  const [exe, ...args] = JSON.parse(line![1]!) as string[];
  expect(exe).toBe('node');
  const child = spawn(process.execPath, args, {
    env: { ...process.env, LEDGERBOT_HTTP_PORT: String(port) },
    stdio: 'ignore',
    timeout: 10_000,
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

describe('the Dockerfile', () => {
  it('is multi-stage, prunes dev dependencies, runs as non-root with a state volume', () => {
    const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const stages = text.split(/^FROM /m).slice(1);
    expect(stages).toHaveLength(2);
    expect(stages[0]).toMatch(/npm ci/);
    expect(stages[0]).toMatch(/npm prune --omit=dev/);
    const runtime = stages[1]!;
    expect(runtime).toMatch(/COPY --from=build \/app\/node_modules/);
    expect(runtime).not.toMatch(/npm (ci|install)/);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^VOLUME \[.*"\/var\/lib\/ledgerbot"\]$/m);
    expect(runtime).toMatch(/^HEALTHCHECK /m);
    expect(runtime).toMatch(/^CMD \["run", "--config", "\/etc\/ledgerbot\/bot.config.yaml"\]$/m);
  });

  it('its HEALTHCHECK passes against the running bot', async () => {
    expect(await healthcheck()).toBe(0);
  });
});

describe('after the bot stopped', () => {
  it('the health check and status fail (exit 1); dead-letters falls back to the store', async () => {
    await running!.close();
    running = undefined;
    expect(await healthcheck()).toBe(1);
    const r = await cli(['status', '--config', config]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`the bot is not reachable at http://127.0.0.1:${port} (ECONNREFUSED)`);
    const l = await cli(['dead-letters', 'list', '--config', config]);
    expect(l.code).toBe(0);
    expect(l.out).toContain(`0 dead letter(s) (store ${join(tmp, 'state')})`);
  });
});
