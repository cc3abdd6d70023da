import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeadLetterView } from '../../src/runtime/intent-view.js';
import { loadRulesOrThrow } from '../../src/rules/load-rules.js';
import { ensureBuilt, spawnBot, type ChildBot } from './child-bot.js';
import {
  countContracts,
  seedTwoDeadLetters,
  startTestLedger,
  waitFor,
  type TestLedger,
  AUDIT_RULE_FEW_RETRIES,
  freePort,
} from './harness.js';
import { TestScope } from '../support/test-scope.js';
import { cli } from '../support/cli-capture.js';

// Every CLI command against a real `ledgerbot run` (a child process) on a real sandbox and a
// real SQLite state directory: the read-only ones read the store the bot is writing, the
// writing ones go through its ops API (or are refused, saying why, when it has none), and
// without a running bot the writing ones work on the store themselves.

/** Once a year, so the driver never runs it during the test: only run-slot does. */
const SLOT_RULE = `version: 1
rules:
  - id: yearly-audit
    schedule: { cron: '0 3 1 1 *', timezone: UTC, catchUp: none }
    forEach: { activeContracts: '#invoices:Invoice:Invoice', party: issuer }
    then:
      - create:
          template: '#audit:Audit:Seen'
          createArguments:
            owner: '\${{ parties.issuer }}'
            reference: 'at \${{ now }} \${{ contract.createArgument.reference }}'
            amount: '\${{ contract.createArgument.amount }}'
        actAs: [issuer]
`;
const TOKEN = 'while-running-ops-token';

let ledger: TestLedger;
const scope = new TestScope();
let tmp: string;
let withHttp: string;
let withoutHttp: string;
let stateDir: string;
let port: number;

function writeConfig(name: string, http: string): string {
  const path = join(tmp, name);
  writeFileSync(
    path,
    [
      'ledger:',
      `  url: ${ledger.url}`,
      '  userId: ledgerbot',
      '  auth: { type: none }',
      'parties:',
      `  issuer: '${ledger.parties.issuer}'`,
      `  payer: '${ledger.parties.payer}'`,
      'rules: rules/',
      'state: { dir: state }',
      http,
      'log: { level: info, pretty: false }',
      '',
    ].join('\n'),
  );
  return path;
}

/** `ledgerbot run` with `config`, once it runs (and its ops API listens, with http). */
async function startChild(config: string, http: boolean): Promise<ChildBot> {
  const bot = spawnBot(config);
  try {
    await bot.waitForLine(
      (l) => l.msg === 'bot state changed' && l.state === 'running',
      30_000,
      'the bot running',
    );
    if (http) await bot.waitForLine((l) => l.msg === 'ops server listening', 10_000, 'ops');
  } catch (err) {
    await bot.kill();
    throw err;
  }
  return bot;
}

async function stopChild(bot: ChildBot): Promise<void> {
  await bot.kill('SIGTERM');
  expect((await bot.exited).code).toBe(0);
}

async function deadLetters(config: string): Promise<DeadLetterView[]> {
  const r = await cli(['dead-letters', 'list', '--config', config, '--json']);
  expect(r.err).toBe('');
  return JSON.parse(r.out) as DeadLetterView[];
}

beforeAll(async () => {
  const built = ensureBuilt();
  ledger = scope.own(await startTestLedger(7404));
  tmp = scope.tempDir('ledgerbot-cli-while-running-');
  stateDir = join(tmp, 'state');
  mkdirSync(join(tmp, 'rules'));
  const auditFile = join(tmp, 'rules', 'audit.yaml');
  writeFileSync(auditFile, AUDIT_RULE_FEW_RETRIES);
  port = await freePort();
  withHttp = writeConfig('http.config.yaml', `http: { port: ${port}, token: ${TOKEN} }`);
  withoutHttp = writeConfig('no-http.config.yaml', '');
  // Two dead letters in the store: every submission is turned away until retries run out.
  await seedTwoDeadLetters(
    ledger,
    stateDir,
    loadRulesOrThrow([{ path: auditFile, text: readFileSync(auditFile, 'utf8') }], {
      parties: ledger.parties,
    }),
  );
  writeFileSync(join(tmp, 'rules', 'slot.yaml'), SLOT_RULE);
  await built;
}, 180_000);

afterAll(() => scope.close());

describe('while the bot runs, with http in its config', () => {
  let bot: ChildBot;
  beforeAll(async () => {
    bot = await startChild(withHttp, true);
  }, 60_000);
  afterAll(async () => {
    await stopChild(bot);
  }, 30_000);

  it('status', async () => {
    const r = await cli(['status', '--config', withHttp]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^bot +running/m);
  });

  it('schedule reads the store the bot holds (it failed with "database is locked")', async () => {
    const r = await cli(['schedule', '--config', withHttp]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('yearly-audit');
    expect(r.out).toContain('last completed: never');
  });

  it('explain, by update id and by offset; backtest', async () => {
    const [first] = await deadLetters(withHttp);
    const trigger = first!.trigger as { updateId: string };
    for (const selector of [
      ['--update-id', trigger.updateId],
      ['--offset', String(first!.offset)],
    ]) {
      const r = await cli(['explain', '--config', withHttp, ...selector]);
      expect(r.err, selector.join(' ')).toBe('');
      expect(r.code).toBe(0);
      expect(r.out).toContain(`update ${trigger.updateId} at offset ${first!.offset}`);
      expect(r.out).toContain('1 rule(s) fired, 1 command(s) would be submitted');
    }
    const end = await ledger.client.ledgerEnd();
    const b = await cli(['backtest', '--config', withHttp, '--from', '1', '--to', String(end)]);
    expect(b.err).toBe('');
    expect(b.code).toBe(0);
    expect(b.out).toContain('audit-invoices');
  });

  it('run-slot: the bot runs the slot; the same slot again adds nothing', async () => {
    const before = (await countContracts(ledger)).seen;
    const args = ['run-slot', '--config', withHttp, '--rule', 'yearly-audit'];
    const at = ['--at', '2026-06-01T00:00:00Z', '--wait', '30000'];
    const r = await cli([...args, ...at]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      'rule yearly-audit: slot 2026-01-01 Thu 03:00:00 +00:00 (2026-01-01T03:00:00.000Z)',
    );
    expect(r.out).toContain(`run by the running bot at http://127.0.0.1:${port}`);
    expect(r.out).toContain('2 contract(s) read, 2 intent(s)');
    expect(r.out).toContain('outcomes: 2 succeeded');
    expect((await countContracts(ledger)).seen).toBe(before + 2);
    const again = await cli([...args, ...at]);
    expect(again.code).toBe(0);
    expect(again.out).toContain('outcomes: 2 succeeded');
    const counts = await countContracts(ledger);
    expect(counts.seen).toBe(before + 2);
    expect(counts.duplicates).toEqual([]);
    // The store the bot holds says so too, read while it runs.
    const s = await cli(['schedule', '--config', withHttp]);
    expect(s.out).toContain('2026-01-01T03:00:00.000Z');
    // A mistake is still a usage error, found before the bot is asked.
    const unknown = await cli(['run-slot', '--config', withHttp, '--rule', 'nope']);
    expect(unknown.code).toBe(2);
  }, 60_000);

  it('the run-slot endpoint refuses what it cannot run; GET /intents/{id}', async () => {
    const call = (method: string, path: string, token = TOKEN): Promise<Response> =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}` },
      });
    const answers = [
      await call('POST', '/rules/audit-invoices/run-slot'),
      await call('POST', '/rules/nope/run-slot'),
      await call('POST', '/rules/yearly-audit/run-slot?at=soon'),
      await call('POST', '/rules/yearly-audit/run-slot', 'wrong'),
      await call('GET', '/intents/lb-nope'),
      // Date.parse takes "1" for 2001; a slot still to come would hold the schedule back.
      await call('POST', '/rules/yearly-audit/run-slot?at=1'),
      await call('POST', '/rules/yearly-audit/run-slot?at=2999-01-01T00:00:00Z'),
    ];
    const bodies = await Promise.all(answers.map((a) => a.json()));
    expect(answers.map((a) => a.status)).toEqual([409, 404, 400, 401, 404, 400, 400]);
    expect(bodies[0]).toMatchObject({ error: { code: 'CONFLICT' } });
    expect(JSON.stringify(bodies[0])).toContain('is an event rule');
    expect(JSON.stringify(bodies[5])).toContain('at must be an ISO 8601 time with a zone');
    expect(JSON.stringify(bodies[6])).toContain('is later than now');
    const future = await cli([
      'run-slot',
      '--config',
      withHttp,
      '--rule',
      'yearly-audit',
      '--at',
      '2999-01-01T00:00:00Z',
    ]);
    expect(future.code).toBe(2);
    expect(future.err).toContain('is later than now');
    // Nothing was run: the schedule's last completed slot is not in the future.
    expect((await cli(['schedule', '--config', withHttp])).out).not.toContain('2999');
    const [letter] = await deadLetters(withHttp);
    // Oldest first by default; newest first when asked (the console's order).
    const ids = async (query: string): Promise<string[]> =>
      (
        (await (await call('GET', `/dead-letters${query}`)).json()) as {
          deadLetters: { commandId: string }[];
        }
      ).deadLetters.map((d) => d.commandId);
    const oldest = await ids('');
    expect(oldest.length).toBeGreaterThan(1);
    expect(await ids('?order=newest')).toEqual([...oldest].reverse());
    expect(await ids('?order=newest&limit=1')).toEqual([oldest.at(-1)]);
    expect((await call('GET', '/dead-letters?order=sideways')).status).toBe(400);
    const intent = await call('GET', `/intents/${letter!.commandId}`);
    expect(intent.status).toBe(200);
    expect(await intent.json()).toMatchObject({
      intent: { commandId: letter!.commandId, ruleId: 'audit-invoices', state: 'dead-lettered' },
    });
  });

  it('dead-letters: list and show (the retry line names --config), retry and drop', async () => {
    const letters = await deadLetters(withHttp);
    expect(letters).toHaveLength(2);
    const [retried, dropped] = letters as [DeadLetterView, DeadLetterView];
    const show = await cli(['dead-letters', 'show', retried.commandId, '--config', withHttp]);
    expect(show.code).toBe(0);
    expect(show.out).toContain('via the running bot');
    expect(show.out).toContain(
      `retry: ledgerbot dead-letters retry ${retried.commandId} --config ${withHttp}\n`,
    );
    const before = (await countContracts(ledger)).seen;
    const r = await cli(['dead-letters', 'retry', retried.commandId, '--config', withHttp]);
    expect(r.err).toBe('');
    expect(r.out).toContain('the running bot resubmits it under the same commandId now');
    await waitFor(
      () => countContracts(ledger),
      (c) => c.seen === before + 1,
      20_000,
      'retried',
    );
    const d = await cli(['dead-letters', 'drop', dropped.commandId, '--config', withHttp]);
    expect(d.code).toBe(0);
    expect(await deadLetters(withHttp)).toEqual([]);
    expect((await countContracts(ledger)).duplicates).toEqual([]);
  }, 60_000);

  it('pause, resume, reload', async () => {
    const p = await cli(['pause', 'audit-invoices', '--config', withHttp]);
    expect(p.err).toBe('');
    expect(p.out).toContain('rule audit-invoices is paused');
    const status = JSON.parse((await cli(['status', '--config', withHttp, '--json'])).out) as {
      rules: { id: string; state: string }[];
    };
    expect(status.rules.find((x) => x.id === 'audit-invoices')?.state).toBe('paused');
    const r = await cli(['resume', 'audit-invoices', '--config', withHttp]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/rule audit-invoices is (resuming|active)/);
    const missing = await cli(['pause', 'nope', '--config', withHttp]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('no rule with id "nope"');
    const same = await cli(['reload', '--config', withHttp]);
    expect(same.err).toBe('');
    expect(same.out).toBe('rules reloaded: no change (2 rule(s))\n');
    const bad = join(tmp, 'rules', 'bad.yaml');
    writeFileSync(bad, 'version: 1\nrules:\n  - id: broken\n    on: { created: 3 }\n');
    try {
      const refused = await cli(['reload', '--config', withHttp]);
      expect(refused.code).toBe(1);
      expect(refused.err).toContain('the old ones keep running');
      expect(refused.err).toContain('bad.yaml');
    } finally {
      rmSync(bad);
    }
    expect([...p.out, ...r.out, ...same.out].join('')).not.toContain(TOKEN);
  }, 30_000);
});

describe('while the bot runs without http', () => {
  let bot: ChildBot;
  beforeAll(async () => {
    bot = await startChild(withoutHttp, false);
  }, 60_000);
  afterAll(async () => {
    await stopChild(bot);
  }, 30_000);

  it('the read-only commands read its store and the ledger', async () => {
    const s = await cli(['schedule', '--config', withoutHttp]);
    expect(s.err).toBe('');
    expect(s.out).toContain('last completed: 2026-01-01');
    const l = await cli(['dead-letters', 'list', '--config', withoutHttp]);
    expect(l.err).toBe('');
    expect(l.out).toContain(`0 dead letter(s) (store ${stateDir})`);
    // state export reads one snapshot of the store the bot is writing.
    const x = await cli(['state', 'export', '--config', withoutHttp]);
    expect(x.code).toBe(0);
    expect(x.err).toMatch(/^exported \d+ intent\(s\) and 1 slot record\(s\) from /);
    const [header, ...rest] = x.out.trimEnd().split('\n');
    expect(JSON.parse(header!)).toMatchObject({ format: 'ledgerbot-journal', slots: 1 });
    expect(rest.at(-1)).toContain('"ruleId":"yearly-audit"');
    // Its store holds a journal: an import there is refused before the bot's lock is asked.
    const file = join(stateDir, '..', 'journal.jsonl');
    writeFileSync(file, x.out);
    const i = await cli(['state', 'import', '--config', withoutHttp, '--in', file]);
    expect(i.code).toBe(2);
    expect(i.err).toContain('[STORE_NOT_EMPTY]');
    const e = await cli(['explain', '--config', withoutHttp, '--offset', '1']);
    expect(e.code).toBe(0);
    // The last transaction is one of the bot's own creates, which its filter does not show.
    const end = await ledger.client.ledgerEnd();
    const hidden = await cli(['explain', '--config', withoutHttp, '--offset', String(end)]);
    expect(hidden.code).toBe(1);
    expect(hidden.err).toContain(`the update at offset ${end} exists, but none of its events`);
    const beyond = await cli(['explain', '--config', withoutHttp, '--offset', String(end + 1000)]);
    expect(beyond.code).toBe(1);
    expect(beyond.err).toContain('ledgerbot: ');
  });

  it('the writing ones are refused (exit 1), naming the missing http section; the store is untouched', async () => {
    const before = await ledger.client.ledgerEnd();
    for (const args of [
      ['run-slot', '--rule', 'yearly-audit', '--at', '2025-06-01T00:00:00Z'],
      ['dead-letters', 'retry', 'lb-whatever'],
      ['dead-letters', 'drop', 'lb-whatever'],
    ]) {
      const r = await cli([...args, '--config', withoutHttp]);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.err).toContain('in use by a running ledgerbot');
      expect(r.err).toContain('has no http section');
      expect(r.err).toContain('[STORE_LOCKED]');
    }
    expect(await ledger.client.ledgerEnd()).toBe(before);
    // The API-only commands are usage errors without http.
    for (const args of [['pause', 'audit-invoices'], ['reload'], ['status']]) {
      const r = await cli([...args, '--config', withoutHttp]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toContain('no http section');
    }
  });
});

describe('without a running bot', () => {
  it('run-slot and dead-letters work on the store; the API-only commands say the bot is not running', async () => {
    const r = await cli([
      'run-slot',
      '--config',
      withHttp,
      '--rule',
      'yearly-audit',
      '--at',
      '2025-06-01T00:00:00Z',
      '--wait',
      '30000',
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).not.toContain('run by the running bot');
    expect(r.out).toContain('outcomes: 2 succeeded');
    expect((await countContracts(ledger)).duplicates).toEqual([]);
    const l = await cli(['dead-letters', 'list', '--config', withHttp]);
    expect(l.out).toContain(`(store ${stateDir})`);
    for (const args of [
      ['pause', 'audit-invoices'],
      ['resume', 'audit-invoices'],
      ['reload'],
      ['status'],
    ]) {
      const x = await cli([...args, '--config', withHttp]);
      expect(x.code, args.join(' ')).toBe(1);
      expect(x.err).toContain(`not reachable at http://127.0.0.1:${port}`);
    }
  }, 60_000);
});
