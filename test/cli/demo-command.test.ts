import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { ensureBuilt } from '../integration/child-bot.js';
import { ROOT, tempDir } from '../integration/harness.js';

type Run = { code: number | null; out: string; err: string };

/**
 * Runs `node bin/ledgerbot.js demo ...`; `interruptWhen` sends SIGINT once stdout matches it,
 * after `beforeInterrupt` (given the output so far) is done.
 */
function demo(
  args: string[],
  interruptWhen?: RegExp,
  beforeInterrupt: (out: string) => Promise<void> = () => Promise.resolve(),
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/ledgerbot.js'), 'demo', ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let interrupted = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (interruptWhen !== undefined && !interrupted && interruptWhen.test(out)) {
        interrupted = true;
        void beforeInterrupt(out)
          .catch((e: unknown) => (err += `beforeInterrupt failed: ${String(e)}\n`))
          .finally(() => child.kill('SIGINT'));
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

function captured(): {
  io: { out: (t: string) => void; err: (t: string) => void };
  text: () => string;
} {
  let text = '';
  return {
    io: { out: (t) => (text += t), err: (t) => (text += t) },
    text: () => text,
  };
}

describe('ledgerbot demo', () => {
  beforeAll(ensureBuilt, 150_000);

  it(
    'runs for --duration, shows what each rule did and ends with verified ledger effects',
    { timeout: 60_000 },
    async () => {
      const t = tempDir('ledgerbot-demo-test-');
      try {
        const r = await demo([
          '--duration',
          '5s',
          '--port',
          '0',
          '--pace',
          '150ms',
          '--state-dir',
          t.dir,
        ]);
        const transcript = `exit ${r.code}\n${r.out}\n${r.err}`;
        expect(r.err, transcript).toBe('');
        expect(r.code, transcript).toBe(0);
        expect(r.out, transcript).toContain('ledger effects    verified');
        // The sandbox URL comes first, for other clients.
        expect(r.out).toMatch(/^ledgerbot demo:.*\n {2}sandbox {2}http:\/\/127\.0\.0\.1:\d+ /);
        // Then the console's address, and nothing opened.
        expect(r.out).toMatch(/\n {2}console {2}http:\/\/127\.0\.0\.1:\d+\/\n/);
        // One human line per outcome: rule, command, result.
        expect(r.out).toMatch(
          /accept-small-invoices +AcceptInvoice INV-\d{4} \(\d+\.00 USD\) +done/,
        );
        expect(r.out).toMatch(/settle-accepted-invoices +Settle payment of INV-\d{4} +done/);
        expect(r.out).toContain('stopping: 5s elapsed');
        expect(r.out).toContain('ledger effects    verified');
        expect(r.out).not.toContain('✗');
        const accepted = Number(/✓ (\d+) small USD invoices accepted by the rule/.exec(r.out)?.[1]);
        expect(accepted).toBeGreaterThan(3);
        // Every intent ends, none dead-lettered. A reminder can race the payer accepting its
        // invoice by hand (then it is rejected as not needed, rightly); no other rule's may be.
        const intents =
          /intents +pending 0, submitted 0, succeeded (\d+), duplicate \d+, rejected \d+, dead-lettered 0/.exec(
            r.out,
          );
        expect(intents, transcript).not.toBeNull();
        expect(r.out, transcript).not.toMatch(
          /^ {4}(accept-small-invoices|settle-accepted-invoices) .*rejected/m,
        );
        expect(Number(intents?.[1])).toBeGreaterThanOrEqual(2 * accepted);
        // No JSON log spam on the terminal: the log went to the state directory.
        expect(r.out).not.toMatch(/^\{"level"/m);
        expect(r.out).toContain(join(t.dir, 'ledgerbot.log'));
      } finally {
        t.cleanup();
      }
    },
  );

  it(
    "serves the console with the demo's rules and live counts; stops on SIGINT with the same summary and exit 0",
    { timeout: 60_000 },
    async () => {
      const t = tempDir('ledgerbot-demo-test-');
      try {
        let rules: { id: string; counts: { fired: number } }[] = [];
        let page = '';
        const r = await demo(
          ['--port', '0', '--pace', '100ms', '--state-dir', t.dir],
          /settle-accepted-invoices .* done/,
          async (out) => {
            const url = / {2}console {2}(http:\/\/127\.0\.0\.1:\d+\/)\n/.exec(out)![1]!;
            page = await (await fetch(url)).text();
            rules = ((await (await fetch(`${url}rules`)).json()) as { rules: typeof rules }).rules;
          },
        );
        expect(r.err).toBe('');
        expect(page).toMatch(/<html/i);
        expect(rules.map((x) => x.id)).toEqual(
          expect.arrayContaining(['accept-small-invoices', 'settle-accepted-invoices']),
        );
        expect(rules.find((x) => x.id === 'accept-small-invoices')!.counts.fired).toBeGreaterThan(
          0,
        );
        expect(r.code).toBe(0);
        expect(r.out).toContain('Runs until Ctrl-C');
        expect(r.out).toContain('stopping: SIGINT received');
        expect(r.out).toContain('ledger effects    verified');
        expect(r.out).not.toContain('✗');
      } finally {
        t.cleanup();
      }
    },
  );

  it('rejects bad options with exit 2', async () => {
    for (const args of [['--port', 'x'], ['--duration', 'soon'], ['--seed', '-1'], ['--nope']]) {
      const c = captured();
      expect(await runCli(['demo', ...args], c.io)).toBe(2);
      expect(c.text()).toMatch(/^ledgerbot: /);
    }
  });
});
