import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureBuilt,
  spawnBot,
  writeBotConfig,
  type ChildBot,
  type LogLine,
} from '../integration/child-bot.js';
import { startTestLedger, tempDir, type TempDir, type TestLedger } from '../integration/harness.js';
import { readConfig } from '../../src/cli/compose/read-config.js';
import { rootLogger } from '../../src/cli/compose/root-logger.js';
import { startBot, type RunningBot } from '../../src/cli/compose/start-bot.js';

// `ledgerbot run` as a real process with nothing to do: its only rule is disabled and there is
// no `http` section, so no stream, socket or server of its own is open. It used to end by itself
// a second after `running` (Node's exit 13, "unsettled top-level await", no message).

let ledger: TestLedger | undefined;
let inProcess: RunningBot | undefined;
let temp: TempDir | undefined;
const children: ChildBot[] = [];

beforeAll(ensureBuilt, 150_000);

afterEach(async () => {
  for (const c of children.splice(0)) await c.kill('SIGKILL');
  await inProcess?.close();
  inProcess = undefined;
  await ledger?.close();
  temp?.cleanup();
  ledger = undefined;
  temp = undefined;
});

const DISABLED = [
  'version: 1',
  'rules:',
  '  - id: audit-invoices',
  '    enabled: false',
  '    on:',
  "      created: '#invoices:Invoice:Invoice'",
  '      party: issuer',
  '    then:',
  '      - create:',
  "          template: '#audit:Audit:Seen'",
  '          createArguments:',
  "            owner: '${{ parties.issuer }}'",
  "            reference: '${{ event.createArgument.reference }}'",
  "            amount: '${{ event.createArgument.amount }}'",
  '        actAs: [issuer]',
  '',
].join('\n');

const running = (l: LogLine): boolean => l.msg === 'bot state changed' && l.state === 'running';

describe('ledgerbot run with no rule enabled', () => {
  it('stays up, idle, until SIGTERM, then exits 0 saying why', { timeout: 60_000 }, async () => {
    ledger = await startTestLedger(7101);
    temp = tempDir();
    const rules = join(temp.dir, 'rules');
    mkdirSync(rules);
    writeFileSync(join(rules, 'audit.yaml'), DISABLED);
    const config = writeBotConfig(ledger, temp.dir, { stateDir: join(temp.dir, 'state'), rules });
    const bot = spawnBot(config);
    children.push(bot);
    await bot.waitForLine(running, 20_000, 'the bot running');
    expect(
      bot.lines.some((l) => typeof l.msg === 'string' && l.msg.startsWith('no rule is enabled')),
    ).toBe(true);

    // Still running 10 s later: the process does not end on its own.
    const outcome = await Promise.race([
      bot.exited.then((e) => ({ exited: e })),
      new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), 10_000)),
    ]);
    expect(outcome, bot.other.join('\n')).toBe('alive');

    bot.child.kill('SIGTERM');
    const exit = await bot.exited;
    expect(exit.code).toBe(0);
    expect(bot.other.join('')).toMatch(/ledgerbot: stopped by SIGTERM/);
    expect(
      bot.lines.some(
        (l) => l.msg === 'exiting' && l.why === 'stopped by SIGTERM' && l.exitCode === 0,
      ),
    ).toBe(true);
  });

  it('is ready (/readyz 200) and logs why it does nothing', { timeout: 30_000 }, async () => {
    ledger = await startTestLedger(7102);
    temp = tempDir();
    const rules = join(temp.dir, 'rules');
    mkdirSync(rules);
    writeFileSync(join(rules, 'audit.yaml'), DISABLED);
    const path = writeBotConfig(ledger, temp.dir, { stateDir: join(temp.dir, 'state'), rules });
    writeFileSync(path, `${readFileSync(path, 'utf8')}http: { port: 0 }\n`);
    const lines: string[] = [];
    const logger = rootLogger(
      { level: 'info', pretty: false },
      { out: (t) => void lines.push(t), err: () => undefined },
    );
    inProcess = await startBot(await readConfig(path), logger);
    expect(inProcess.bot.state).toBe('running');
    const res = await fetch(`${inProcess.ops!.url}/readyz`);
    expect({ status: res.status, body: await res.text() }).toEqual({
      status: 200,
      body: 'ready\n',
    });
    await new Promise((r) => setImmediate(r)); // the log lines of this turn are written
    expect(lines.join('')).toContain('no rule is enabled: all 1 rule(s) of the 1 rule file(s)');
  });
});
