import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { formatTable } from '../../src/cli/present/format-table.js';
import { createOpsClient, OpsApiError } from '../../src/cli/ops-client.js';
import { formatStatus } from '../../src/cli/present/status-text.js';
import { cli } from '../support/cli-capture.js';
import { freePort } from '../support/free-port.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('the ops commands', () => {
  it('each has --help (exit 0) and is listed in the command list', async () => {
    const list = await cli(['--help']);
    for (const name of ['status', 'dead-letters', 'explain', 'backtest']) {
      expect(list.out).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
      const r = await cli([name, '--help']);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`Usage: ledgerbot ${name}`);
    }
  });

  it('bad arguments exit 2 before any config is read', async () => {
    const cases = [
      ['dead-letters'],
      ['dead-letters', 'purge', 'x'],
      ['dead-letters', 'show'],
      ['dead-letters', 'list', '--limit', 'many'],
      ['explain'],
      ['explain', '--update-id', ''],
      ['backtest', '--to', '3'],
      ['backtest', '--from', '-1', '--to', '3'],
      ['backtest', '--from', '1.5', '--to', '3'],
      ['backtest', '--from', '4', '--to', '3'],
      ['status', 'extra'],
    ];
    for (const args of cases) {
      const r = await cli([...args, '--config', '/nonexistent/bot.config.yaml']);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err, args.join(' ')).not.toContain('/nonexistent');
    }
    // With valid arguments, a missing config is the next thing reported (still exit 2).
    const r = await cli(['status', '--config', '/nonexistent/bot.config.yaml']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('cannot read the config file /nonexistent/bot.config.yaml');
  });
});

describe('the secrets an ops command needs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerbot-ops-env-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(() => vi.unstubAllEnvs());

  it("reads status without the participant's credential, but not without the ops token", async () => {
    const port = await freePort();
    const config = join(dir, 'bot.config.yaml');
    writeFileSync(
      config,
      [
        'ledger:',
        '  url: http://127.0.0.1:7575',
        '  userId: bot',
        '  auth: { type: static, token: "${LEDGER_TOKEN_FOR_OPS_TEST}" }',
        'rules: rules/',
        `http: { port: ${port}, token: "\${OPS_TOKEN_FOR_OPS_TEST}" }`,
        '',
      ].join('\n'),
    );
    vi.stubEnv('LEDGER_TOKEN_FOR_OPS_TEST', undefined);
    vi.stubEnv('OPS_TOKEN_FOR_OPS_TEST', 'ops-secret');
    for (const args of [['status'], ['pause', 'some-rule'], ['dead-letters', 'list']]) {
      const r = await cli([...args, '--config', config]);
      // Past the config: nothing listens on the ops port (dead-letters then reads the store).
      expect(r.err, args.join(' ')).not.toContain('LEDGER_TOKEN_FOR_OPS_TEST');
      expect(r.code, args.join(' ')).not.toBe(2);
    }
    vi.stubEnv('OPS_TOKEN_FOR_OPS_TEST', undefined);
    const r = await cli(['status', '--config', config]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('environment variable OPS_TOKEN_FOR_OPS_TEST is not set');
    expect(r.err).not.toContain('LEDGER_TOKEN_FOR_OPS_TEST');
  });
});

describe('formatStatus', () => {
  it('renders a sparse document with dashes, and paused rules with their offset', () => {
    const text = formatStatus({
      state: 'starting',
      checkpoint: null,
      lag: null,
      rules: [
        { id: 'a', revision: 2, trigger: 'created', state: 'paused', pausedAtOffset: 17 },
        { id: 'bb', trigger: 'schedule', state: 'active', file: '/r.yaml', line: 3 },
      ],
    });
    expect(text).toMatch(/^bot +starting$/m);
    expect(text).toMatch(/^stream +DISCONNECTED, - reconnect\(s\)$/m);
    expect(text).toMatch(/^checkpoint +-$/m);
    expect(text).toMatch(/^lag +-$/m);
    expect(text).toMatch(/^a +2 +created +paused \(since offset 17\) +-$/m);
    expect(text).toMatch(/^bb +- +schedule +active +\/r\.yaml:3$/m);
    expect(text).toContain('(none yet)');
  });

  it("shows a fleet member's fleet: its rules, the members and each rule's owner", () => {
    const text = formatStatus({
      state: 'running',
      fleet: {
        name: 'invoices',
        instanceId: 'h-1-aa',
        running: ['accept'],
        members: [
          { instanceId: 'h-1-aa', live: true, self: true, rules: 1, heartbeatAt: 'T1' },
          { instanceId: 'h-2-bb', live: false, rules: 0, heartbeatAt: 'T0' },
        ],
        owners: [
          { ruleId: 'accept', owner: 'h-1-aa', generation: 3 },
          { ruleId: 'settle', owner: null, generation: 2 },
        ],
      },
    });
    expect(text).toContain('fleet invoices: this member h-1-aa runs accept\n');
    const starting = formatStatus({
      state: 'running',
      fleet: {
        name: 'invoices',
        instanceId: 'h-1-aa',
        running: [],
        starting: ['accept', 'settle'],
      },
    });
    expect(starting).toContain(
      'fleet invoices: this member h-1-aa runs no rule; its bot is starting accept, settle\n',
    );
    expect(text).toMatch(/^h-1-aa \(this one\) +yes +1 +T1$/m);
    expect(text).toMatch(/^h-2-bb +no +0 +T0$/m);
    expect(text).toMatch(/^accept +h-1-aa +3$/m);
    expect(text).toMatch(/^settle +\(none: being taken over\) +2$/m);
    expect(formatStatus({ state: 'running' })).not.toContain('fleet');
  });

  it('shows the newest 10 intents and says how many more --json has', () => {
    const recentIntents = Array.from({ length: 12 }, (_, i) => ({
      commandId: `lb-r-${i}`,
      ruleId: 'r',
      state: 'succeeded',
      attempts: 1,
      offset: 100 - i,
      updatedAt: '2026-01-01T00:00:00.000Z',
    }));
    const text = formatStatus({ state: 'running', recentIntents });
    expect(text).toContain('last intents (newest 10; --json shows 2 more):');
    expect(text).toContain('lb-r-9');
    expect(text).not.toContain('lb-r-10');
  });
});

describe('formatTable', () => {
  it('pads every column but the last to its widest cell', () => {
    expect(
      formatTable(
        ['A', 'BB', 'C'],
        [
          ['xxx', 'y', 'last one'],
          ['', 'zzz', ''],
        ],
      ),
    ).toBe('A    BB   C\nxxx  y    last one\n     zzz\n');
  });
});

describe('the ops client', () => {
  it('nothing listening: unreachable, with the address', async () => {
    const port = await freePort();
    const client = createOpsClient({ host: '0.0.0.0', port });
    expect(client.baseUrl).toBe(`http://127.0.0.1:${port}`);
    const err = await client.request('GET', '/status').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpsApiError);
    expect((err as OpsApiError).failure).toBe('unreachable');
    expect((err as OpsApiError).message).toContain(`http://127.0.0.1:${port}`);
  });

  it('sends the bearer token, and never puts it in an error', async () => {
    const seen: (string | undefined)[] = [];
    const port = await listen(
      createServer((req, res) => {
        seen.push(req.headers.authorization);
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end('{"error":{"code":"UNAUTHORIZED","message":"no"}}');
      }),
    );
    const client = createOpsClient({ host: '127.0.0.1', port, token: 'tok-secret' });
    const err = (await client.request('GET', '/status').catch((e: unknown) => e)) as OpsApiError;
    expect(seen).toEqual(['Bearer tok-secret']);
    expect(err.failure).toBe('unauthorized');
    expect(err.message).not.toContain('tok-secret');
  });

  it('a port that is not a ledgerbot (plain text): bad-response', async () => {
    const port = await listen(
      createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('hello');
      }),
    );
    const err = (await createOpsClient({ host: '127.0.0.1', port })
      .request('GET', '/status')
      .catch((e: unknown) => e)) as OpsApiError;
    expect(err.failure).toBe('bad-response');
    expect(err.message).toContain('is that port a ledgerbot ops server?');
  });
});
