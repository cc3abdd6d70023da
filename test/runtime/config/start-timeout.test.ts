import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';
import { ConfigError } from '../../../src/runtime/config/config-error.js';
import { loadBotConfig } from '../../../src/runtime/config/load-bot-config.js';

// ledger.startTimeout: how long `run` waits for a participant that does not answer at start.

const FILE = '/etc/ledgerbot/bot.config.yaml';
const config = (startTimeout?: string): string =>
  [
    'ledger:',
    '  url: http://127.0.0.1:7575',
    '  userId: bot',
    ...(startTimeout === undefined ? [] : [`  startTimeout: ${startTimeout}`]),
    'rules: rules/',
    '',
  ].join('\n');
const load = (text: string) => loadBotConfig({ path: FILE, text, env: {} });

describe('ledger.startTimeout', () => {
  it('is absent by default: wait until the participant answers', () => {
    expect(load(config()).ledger.startTimeoutMs).toBeUndefined();
  });

  it('is a duration', () => {
    expect(load(config('5m')).ledger.startTimeoutMs).toBe(300_000);
    expect(load(config('1h30m')).ledger.startTimeoutMs).toBe(5_400_000);
  });

  it('reports a bad value at file:line:col', () => {
    let error: unknown;
    try {
      load(config('5 minutes'));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problem = (error as ConfigError).problems[0]!;
    expect(problem).toMatchObject({ file: FILE, line: 4, col: 17 });
    expect((error as ConfigError).message).toContain(`${FILE}:4:17`);
    expect((error as ConfigError).message).toContain('ledger.startTimeout');
  });

  const dir = mkdtempSync(join(tmpdir(), 'ledgerbot-start-timeout-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a bad value exits 2 (run and validate)', async () => {
    const path = join(dir, 'bot.config.yaml');
    writeFileSync(path, config('soon'));
    for (const command of ['run', 'validate']) {
      let err = '';
      const code = await runCli([command, '--config', path], {
        out: () => undefined,
        err: (t) => void (err += t),
      });
      expect(code).toBe(2);
      expect(err).toContain(`${path}:4:17`);
    }
  });
});
