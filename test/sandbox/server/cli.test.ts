import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { syntheticDar } from '../../support/synthetic-dar.js';
import { tempDir } from '../../support/temp-dir.js';
import { INVOICES_MODEL } from './sandbox-fixture.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(ROOT, 'bin/ledgerbot.js');
const tmp = tempDir('ledgerbot-sandbox-cli-');
afterAll(() => tmp.cleanup());

beforeAll(() => {
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
  expect(build.status, build.stderr + build.stdout).toBe(0);
}, 120_000);

describe('ledgerbot sandbox', () => {
  it('prints the ready line with the real port, serves, and stops on SIGTERM with exit code 0', async () => {
    const dar = syntheticDar();
    const darFile = join(tmp.dir, 'synthetic.dar');
    writeFileSync(darFile, dar.bytes);
    const child = spawn(
      process.execPath,
      [
        BIN,
        'sandbox',
        '--port',
        '0',
        '--dar',
        darFile,
        '--model',
        INVOICES_MODEL,
        '--party',
        'Alice',
        '--user',
        'alice-bot:Alice',
        '--seed',
        '3',
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line: ${out}`)), 15_000);
      child.stdout.on('data', () => {
        if (out.includes('\n')) {
          clearTimeout(timer);
          resolve(out.split('\n')[0]!);
        }
      });
      child.on('exit', (code) => reject(new Error(`exited early with ${String(code)}: ${out}`)));
    });
    const m =
      /^sandbox ready (http:\/\/127\.0\.0\.1:(\d+)) participant=(sandbox::1220[0-9a-f]{64})$/.exec(
        line,
      );
    expect(m, line).not.toBeNull();
    expect(Number(m![2])).toBeGreaterThan(0);
    const pid = (await (await fetch(`${m![1]}/v2/parties/participant-id`)).json()) as {
      participantId: string;
    };
    expect(pid.participantId).toBe(m![3]);
    // --dar: the DAR's packages are served, besides the model's own.
    const listed = (await (await fetch(`${m![1]}/v2/packages`)).json()) as { packageIds: string[] };
    expect(listed.packageIds).toEqual(expect.arrayContaining(dar.packages.map((p) => p.packageId)));
    expect(listed.packageIds).toHaveLength(dar.packages.length + 1);
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    // After the ready line, one line per party: --party Alice (also --user alice-bot's party).
    const parties = out.trim().split('\n').slice(1);
    expect(parties).toHaveLength(1);
    expect(parties[0]).toMatch(/^party Alice Alice::1220[0-9a-f]{64}$/);
  }, 30_000);

  it('exits 2 with file:line:col for a bad model file', () => {
    const file = join(tmp.dir, 'bad.yaml');
    writeFileSync(
      file,
      'package:\n  name: bad\n  version: 1.0.0\ntemplates:\n  M:T:\n    fields: { a: Nope }\n    signatories: [a]\n',
    );
    const r = spawnSync(process.execPath, [BIN, 'sandbox', '--port', '0', '--model', file], {
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+: `),
    );
  }, 30_000);

  it('--idle-timeout closes a websocket that stays quiet that long', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'sandbox', '--port', '0', '--model', INVOICES_MODEL, '--idle-timeout', '400ms'],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      let out = '';
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ready line: ${out}`)), 15_000);
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString('utf8');
          const m = /sandbox ready (http:\/\/\S+)/.exec(out);
          if (m !== null) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
      });
      // A socket that never sends its request: nothing flows either way.
      const ws = new WebSocket(`${url.replace('http', 'ws')}/v2/updates`, ['daml.ws.auth']);
      const opened = Date.now();
      const code = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('still open after 10 s')), 10_000);
        ws.on('close', (c: number) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
      expect(code).toBe(1006);
      expect(Date.now() - opened).toBeGreaterThanOrEqual(350);
    } finally {
      child.kill('SIGTERM');
    }
  }, 30_000);

  it('exits 2 for a bad flag or a bad --auth', () => {
    const a = spawnSync(process.execPath, [BIN, 'sandbox', '--nope'], {
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(a.status).toBe(2);
    const b = spawnSync(process.execPath, [BIN, 'sandbox', '--auth', 'rs256:x'], {
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(b.status).toBe(2);
    expect(b.stderr).toMatch(/--auth must be none or hs256:SECRET/);
    for (const [flag, value, message] of [
      ['--port', 'abc', /--port abc: expected a whole number from 0 to 65535/],
      ['--seed', 'x', /--seed x: expected a whole number/],
      ['--max-dedup', '7x', /--max-dedup 7x: "7x" is not a duration/],
      ['--idle-timeout', 'soon', /--idle-timeout soon: "soon" is not a duration/],
    ] as const) {
      const r = spawnSync(process.execPath, [BIN, 'sandbox', flag, value], {
        encoding: 'utf8',
        timeout: 15_000,
      });
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  }, 30_000);
});
