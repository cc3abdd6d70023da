import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/start-sandbox.js';
import { ensureBuilt } from '../integration/child-bot.js';
import { tempDir } from '../support/temp-dir.js';
import { waitFor } from '../support/wait-for.js';

// A program that only follows a stream, as a library user writes it: the client must keep it
// alive while the stream waits to reconnect, and `close` must end the stream so the program ends.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MODEL = join(ROOT, 'examples/invoices/model.yaml');
const dir = tempDir('ledgerbot-client-lifetime-');
let sandbox: Sandbox;

beforeAll(async () => {
  await ensureBuilt();
  sandbox = await startSandbox({ models: [MODEL], parties: ['Payer'], seed: 5 });
}, 180_000);

afterAll(async () => {
  await sandbox?.stop();
  dir.cleanup();
});

/** Runs `body` (an ES module importing ledgerbot's dist as `lb`) and collects its output. */
function program(name: string, body: string) {
  const file = join(dir.dir, `${name}.mjs`);
  writeFileSync(
    file,
    `import * as lb from ${JSON.stringify(join(ROOT, 'dist/index.js'))};\n${body}\n`,
  );
  const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => out };
}

const FOLLOW = (url: string, party: string) => `
const client = await lb.LedgerClient.create({ url: ${JSON.stringify(url)} });
const updateFormat = { includeTransactions: { eventFormat: { filtersByParty: { ${JSON.stringify(party)}: {} }, verbose: false }, transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA' } };
const stream = client.updates({ beginExclusive: 0, updateFormat }, { backoff: { initialMs: 200, maxMs: 400 }, onReconnect: (n) => console.log('reconnect', n) });
`;

describe('a program that follows a stream', () => {
  it('stays alive while the stream waits to reconnect (the participant away)', async () => {
    const away = await startSandbox({ models: [MODEL], parties: ['Payer'], seed: 6 });
    const p = program(
      'follow',
      `${FOLLOW(away.url, away.parties.Payer!)}
console.log('following');
try { for await (const u of stream) console.log('update', u.offset); console.log('loop ended'); }
catch (err) { console.log('loop threw', err.code); }`,
    );
    try {
      await waitFor(p.out, (o) => o.includes('following'), 20_000, 'the program following');
      // Connected (an empty ledger sends nothing); then the participant goes away.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await away.stop();
      await waitFor(p.out, (o) => /reconnect [3-9]/.test(o), 20_000, 'three reconnects');
      // Still there, still trying: a wait for a reconnect is work pending.
      expect(p.child.exitCode).toBeNull();
      expect(p.out()).not.toContain('loop ended');
    } finally {
      p.child.kill();
      await p.exited;
    }
  }, 60_000);

  it('ends when the client closes: the loop throws AbortError and the program exits by itself', async () => {
    const p = program(
      'close',
      `${FOLLOW(sandbox.url, sandbox.parties.Payer!)}
setTimeout(() => { console.log('closing'); void client.close(); }, 1000);
try { for await (const u of stream) console.log('update', u.offset); console.log('loop ended'); }
catch (err) { console.log('loop threw', err.name, err.code); }
try { client.updates({ beginExclusive: 0, updateFormat }); } catch (err) { console.log('after close', err.code); }`,
    );
    const code = await Promise.race([
      p.exited,
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 20_000)),
    ]);
    if (code === 'hung') p.child.kill();
    expect(code).toBe(0);
    expect(p.out()).toContain('closing\nloop threw AbortError ABORTED\nafter close ILLEGAL_STATE');
  }, 60_000);
});
