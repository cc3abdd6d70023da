import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { shellWord } from '../../src/cli/present/dead-letter-text.js';
import { cli } from '../support/cli-capture.js';
import { freePort } from '../support/free-port.js';

// pause, resume and reload against a stand-in ops API (their real bot is in
// test/integration/cli-while-running.test.ts): the requests they send, what they print, and
// their user errors.

const TOKEN = 'rule-control-secret-token';
let dir: string;

function writeConfig(name: string, http: string): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    [
      'ledger:',
      '  url: http://127.0.0.1:1',
      '  userId: ledgerbot',
      'parties: { issuer: "issuer::1220aa" }',
      'rules: rules/',
      'state: { dir: state }',
      http,
      '',
    ].join('\n'),
  );
  return path;
}

type Seen = { method: string; url: string; authorization: string | undefined };
const servers: Server[] = [];

/** An ops API stand-in answering `answer(req)`; records what it was asked. */
async function fakeBot(
  answer: (req: IncomingMessage) => { status: number; body: unknown },
): Promise<{ port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      authorization: req.headers.authorization,
    });
    const a = answer(req);
    res.writeHead(a.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(a.body));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, seen };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ledgerbot-rule-control-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

describe('pause, resume, reload', () => {
  it('each has --help (exit 0) and is listed in the command list', async () => {
    const list = await cli(['--help']);
    for (const name of ['pause', 'resume', 'reload']) {
      expect(list.out).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
      const r = await cli([name, '--help']);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`Usage: ledgerbot ${name}`);
    }
  });

  it('bad arguments exit 2 before any config is read', async () => {
    for (const args of [
      ['pause'],
      ['resume'],
      ['pause', 'a', 'b'],
      ['pause', ''],
      ['reload', 'extra'],
      ['resume', 'a', '--bogus'],
    ]) {
      const r = await cli([...args, '--config', '/nonexistent/bot.config.yaml']);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err, args.join(' ')).toMatch(/^ledgerbot: /);
      expect(r.err, args.join(' ')).not.toContain('/nonexistent');
    }
  });

  it('a config without http is a usage error (exit 2) that says what to add', async () => {
    const config = writeConfig('no-http.yaml', '');
    for (const args of [['pause', 'r'], ['resume', 'r'], ['reload']]) {
      const r = await cli([...args, '--config', config]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toContain('has no http section');
      expect(r.err).toContain('http: { port: 9464 }');
    }
  });

  it('a bot that is not running: exit 1, naming the address', async () => {
    const port = await freePort();
    const config = writeConfig('down.yaml', `http: { port: ${port}, token: ${TOKEN} }`);
    for (const args of [['pause', 'r'], ['resume', 'r'], ['reload']]) {
      const r = await cli([...args, '--config', config]);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.err).toContain(`not reachable at http://127.0.0.1:${port}`);
      expect(r.err).not.toContain(TOKEN);
    }
  });

  it('pause and resume POST to the rule with the token and print its state', async () => {
    const bot = await fakeBot((req) =>
      req.url!.endsWith('/pause')
        ? { status: 200, body: { rule: { id: 'settle', state: 'paused', pausedAtOffset: 42 } } }
        : { status: 200, body: { rule: { id: 'settle', state: 'resuming' } } },
    );
    const config = writeConfig('up.yaml', `http: { port: ${bot.port}, token: ${TOKEN} }`);
    const p = await cli(['pause', 'settle', '--config', config]);
    expect(p).toMatchObject({ code: 0, err: '' });
    expect(p.out).toContain('rule settle is paused (since offset 42)');
    expect(p.out).toContain('ledgerbot resume settle');
    const r = await cli(['resume', 'settle', '--config', config]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('rule settle is resuming');
    expect(bot.seen).toEqual([
      { method: 'POST', url: '/rules/settle/pause', authorization: `Bearer ${TOKEN}` },
      { method: 'POST', url: '/rules/settle/resume', authorization: `Bearer ${TOKEN}` },
    ]);
  });

  it("the bot's refusals exit 1 with its message; a refused token is never printed", async () => {
    const bot = await fakeBot((req) =>
      req.headers.authorization !== `Bearer ${TOKEN}`
        ? { status: 401, body: { error: { code: 'UNAUTHORIZED', message: 'token' } } }
        : {
            status: 404,
            body: { error: { code: 'NOT_FOUND', message: 'no rule with id "nope"' } },
          },
    );
    const config = writeConfig('refuse.yaml', `http: { port: ${bot.port}, token: ${TOKEN} }`);
    const missing = await cli(['pause', 'nope', '--config', config]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('404 NOT_FOUND: no rule with id "nope"');
    const wrong = writeConfig('wrong.yaml', `http: { port: ${bot.port}, token: not-${TOKEN} }`);
    const refused = await cli(['resume', 'x', '--config', wrong]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('refused the token of http.token');
    expect(refused.err + refused.out).not.toContain(TOKEN);
  });

  it('reload prints the diff (exit 0), or every problem (exit 1, the old rules keep running)', async () => {
    let valid = true;
    const bot = await fakeBot(() =>
      valid
        ? {
            status: 200,
            body: {
              applied: true,
              diff: {
                added: [{ id: 'new-rule', revision: 1, hash: 'a' }],
                removed: [],
                changed: [{ id: 'settle', revision: 2, hash: 'b' }],
                unchanged: 3,
              },
            },
          }
        : {
            status: 422,
            body: { applied: false, errors: ['rules/a.yaml:3:5: bad', 'rules/b.yaml:1:1: worse'] },
          },
    );
    const config = writeConfig('reload.yaml', `http: { port: ${bot.port} }`);
    const ok = await cli(['reload', '--config', config]);
    expect(ok).toMatchObject({ code: 0, err: '' });
    expect(ok.out).toBe('rules reloaded: added new-rule@1; changed settle@2; 3 unchanged\n');
    valid = false;
    const bad = await cli(['reload', '--config', config]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('not reloaded, the old ones keep running; 2 problem(s)');
    expect(bad.err).toContain('  rules/a.yaml:3:5: bad\n  rules/b.yaml:1:1: worse\n');
    expect(bot.seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'POST /rules/reload',
      'POST /rules/reload',
    ]);
  });
});

describe('explain --offset', () => {
  it('refuses a bad offset, or both selectors, with exit 2 before any config is read', async () => {
    for (const args of [
      ['--offset', '0'],
      ['--offset', '-3'],
      ['--offset', '1.5'],
      ['--offset', 'ten'],
      ['--offset', ''],
      ['--offset', '3', '--update-id', 'u'],
      [],
    ]) {
      const r = await cli(['explain', ...args, '--config', '/nonexistent/bot.config.yaml']);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err, args.join(' ')).not.toContain('/nonexistent');
    }
    const both = await cli(['explain', '--offset', '3', '--update-id', 'u']);
    expect(both.err).toContain('not both');
  });
});

describe('the command lines dead-letters show prints', () => {
  it('quote a --config path only when the shell needs it', () => {
    expect(shellWord('/etc/ledgerbot/bot.config.yaml')).toBe('/etc/ledgerbot/bot.config.yaml');
    expect(shellWord('lb-rule-0123abc')).toBe('lb-rule-0123abc');
    expect(shellWord('my configs/bot.yaml')).toBe("'my configs/bot.yaml'");
    expect(shellWord("it's.yaml")).toBe("'it'\\''s.yaml'");
    expect(shellWord('$HOME/x')).toBe("'$HOME/x'");
  });
});
