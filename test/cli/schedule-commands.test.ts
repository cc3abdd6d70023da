import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, type CliResult } from '../support/cli-capture.js';
import { eventFormat } from '../../src/ledger/filters.js';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/start-sandbox.js';
import { openSqliteStore, SQLITE_STORE_FILE } from '../../src/store/open-sqlite-store.js';

const MODEL = fileURLToPath(new URL('../schedule/fixtures/chores.model.yaml', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'ledgerbot-schedule-cli-'));

let sandbox: Sandbox;
let client: LedgerClient;
let owner: string;

function run(args: string[]): Promise<CliResult> {
  return cli(args);
}

/** A config directory: bot.config.yaml, rules/chores.yaml, state/. */
function project(name: string, url: string): string {
  const dir = join(tmp, name);
  mkdirSync(join(dir, 'rules'), { recursive: true });
  writeFileSync(
    join(dir, 'bot.config.yaml'),
    `ledger:
  url: ${url}
  userId: bot
  auth: { type: none }
parties:
  owner: '${owner}'
rules: rules/
state:
  dir: state
`,
  );
  writeFileSync(
    join(dir, 'rules', 'chores.yaml'),
    `version: 1
rules:
  - id: weekday-chores
    schedule: { cron: "30 2 * * MON-FRI", timezone: Europe/Zurich, catchUp: all, maxCatchUp: 3 }
    forEach: { activeContracts: "#chores:Chore:Chore", party: owner }
    when: int(contract.createArgument.n) < 3
    then:
      - exercise:
          template: "#chores:Chore:Chore"
          contractId: "\${{ contract.contractId }}"
          choice: MarkDone
          choiceArgument: { slot: "at \${{ now }}" }
        actAs: [owner]
  - id: heartbeat
    enabled: false
    schedule: { cron: "*/10 * * * * *" }
    then:
      - create: { template: "#chores:Chore:Chore", createArguments: { owner: "\${{ parties.owner }}", n: 99 } }
        actAs: [owner]
`,
  );
  return join(dir, 'bot.config.yaml');
}

async function done(): Promise<number> {
  let n = 0;
  for await (const element of client.activeContracts({
    activeAtOffset: await client.ledgerEnd(),
    eventFormat: eventFormat({ parties: [owner], templates: ['#chores:Chore:Done'] }),
  })) {
    if (element.contractEntry !== undefined && 'JsActiveContract' in element.contractEntry) n++;
  }
  return n;
}

beforeAll(async () => {
  sandbox = await startSandbox({
    models: [MODEL],
    parties: ['Owner'],
    users: ['bot:Owner'],
    seed: 5,
    limits: { checkpointIntervalMs: 100, listWaitMs: 100 },
  });
  owner = sandbox.parties.Owner!;
  client = await LedgerClient.create({ url: sandbox.url });
  await client.submitAndWait({
    commands: Array.from({ length: 5 }, (_, n) => ({
      CreateCommand: {
        templateId: '#chores:Chore:Chore',
        createArguments: { owner, n: String(n) },
      },
    })),
    commandId: 'setup',
    actAs: [owner],
    userId: 'bot',
  });
}, 30_000);

afterAll(async () => {
  await client?.close();
  await sandbox?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe('ledgerbot schedule', () => {
  it('lists each schedule rule with its next 5 slots in its zone (across spring-forward)', async () => {
    const config = project('list', 'http://127.0.0.1:9');
    const { code, out, err } = await run([
      'schedule',
      '--config',
      config,
      '--from',
      '2026-03-26T12:00:00Z',
    ]);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('weekday-chores\n  cron:           30 2 * * MON-FRI  (Europe/Zurich)');
    expect(out).toContain('  catch-up:       all (at most 3)');
    expect(out).toContain('  for each:       #chores:Chore:Chore seen by owner');
    expect(out).toContain('  last completed: unknown (no state store yet)');
    const next = out.split('weekday-chores')[1]!.split('heartbeat')[0]!;
    expect(next).toContain(
      [
        '  next:',
        '    2026-03-27 Fri 02:30:00 +01:00  2026-03-27T01:30:00.000Z',
        '    2026-03-30 Mon 02:30:00 +02:00  2026-03-30T00:30:00.000Z',
        '    2026-03-31 Tue 02:30:00 +02:00  2026-03-31T00:30:00.000Z',
        '    2026-04-01 Wed 02:30:00 +02:00  2026-04-01T00:30:00.000Z',
        '    2026-04-02 Thu 02:30:00 +02:00  2026-04-02T00:30:00.000Z',
      ].join('\n'),
    );
    expect(out).toContain('heartbeat (disabled)');
    expect(out).toContain('  for each:       (once per slot)');
  });

  it('shows the last completed and an interrupted slot from the store, without writing it', async () => {
    const config = project('store', 'http://127.0.0.1:9');
    const dir = join(tmp, 'store', 'state');
    const store = openSqliteStore({ dir });
    store.completeSlot('weekday-chores', Date.parse('2026-03-27T01:30:00Z'));
    store.beginSlot('heartbeat', Date.parse('2026-03-27T01:30:10Z'), 4);
    store.close();
    const before = statSync(join(dir, SQLITE_STORE_FILE)).mtimeMs;
    const { code, out } = await run(['schedule', '--config', config, '--format', 'json']);
    expect(code).toBe(0);
    const listed = (JSON.parse(out) as { rules: Record<string, unknown>[] }).rules;
    expect(listed.map((r) => r.ruleId)).toEqual(['weekday-chores', 'heartbeat']);
    expect(listed[0]).toMatchObject({
      lastCompleted: { local: '2026-03-27 Fri 02:30:00 +01:00', utc: '2026-03-27T01:30:00.000Z' },
      inProgress: null,
    });
    expect(listed[0]!.next).toHaveLength(5);
    expect(listed[1]).toMatchObject({
      enabled: false,
      lastCompleted: 'never',
      inProgress: { utc: '2026-03-27T01:30:10.000Z' },
    });
    expect(statSync(join(dir, SQLITE_STORE_FILE)).mtimeMs).toBe(before);
  });

  it('refuses bad options with exit 2', async () => {
    const config = project('bad', 'http://127.0.0.1:9');
    expect((await run(['schedule'])).code).toBe(2);
    const bad = await run(['schedule', '--config', config, '--from', 'tomorrow']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--from must be an ISO 8601 time with a zone');
    expect((await run(['schedule', '--config', config, '--count', '0'])).code).toBe(2);
  });
});

describe('ledgerbot run-slot', () => {
  it('--dry-run prints the intents of the slot and submits nothing', async () => {
    const config = project('dry', sandbox.url);
    const { code, out, err } = await run([
      'run-slot',
      '--config',
      config,
      '--rule',
      'weekday-chores',
      '--at',
      '2026-03-29T12:00:00+02:00',
      '--dry-run',
    ]);
    expect(err).toBe('');
    expect(code).toBe(0);
    // Sunday: the latest slot is Friday's.
    expect(out).toContain(
      'rule weekday-chores: slot 2026-03-27 Fri 02:30:00 +01:00 (2026-03-27T01:30:00.000Z), dry run',
    );
    expect(out.match(/^intent lb-weekday-chores-[0-9a-f]{32} contract /gm)).toHaveLength(3);
    expect(out).toContain(
      '"choice":"MarkDone","choiceArgument":{"slot":"at 2026-03-27T01:30:00.000Z"}',
    );
    expect(out).toContain(': 5 contract(s) read, 3 intent(s)');
    expect(await done()).toBe(0);
  });

  it('submits through the pipeline and waits for outcomes; the same slot again adds nothing', async () => {
    const config = project('real', sandbox.url);
    const args = [
      'run-slot',
      '--config',
      config,
      '--rule',
      'weekday-chores',
      '--at',
      '2026-03-27T01:30:00Z',
    ];
    // --wait takes a duration (a bare number is milliseconds), and names itself when wrong.
    const soon = await run([...args, '--wait', 'soon']);
    expect(soon.code).toBe(2);
    expect(soon.err).toMatch(/^ledgerbot: --wait soon: /);
    const first = await run([...args, '--wait', '30s']);
    expect(first.err).toBe('');
    expect(first.code).toBe(0);
    expect(first.out).toContain('outcomes: 3 succeeded');
    expect(await done()).toBe(3);
    const second = await run(args);
    expect(second.code).toBe(0);
    expect(second.out).toContain('outcomes: 3 succeeded');
    expect(await done()).toBe(3);
    const list = await run(['schedule', '--config', config]);
    expect(list.out).toContain(
      '  last completed: 2026-03-27 Fri 02:30:00 +01:00  2026-03-27T01:30:00.000Z',
    );
  }, 60_000);

  it('names the schedule rules when the rule is unknown, and refuses event rules', async () => {
    const config = project('unknown', sandbox.url);
    const r = await run(['run-slot', '--config', config, '--rule', 'nope', '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      'there is no rule "nope"; the schedule rules are: weekday-chores, heartbeat',
    );
  });
});
