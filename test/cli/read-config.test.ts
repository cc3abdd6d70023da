import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { readConfig } from '../../src/cli/compose/read-config.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { ConfigError } from '../../src/runtime/config/config-error.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ledgerbot-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function usageError(promise: Promise<unknown>): Promise<UsageError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UsageError);
  return err as UsageError;
}

it('reads, interpolates from the given environment and resolves paths against the file', async () => {
  const path = join(dir, 'bot.config.yaml');
  writeFileSync(path, 'ledger:\n  url: ${URL}\n  userId: bot\nrules: rules/\n');
  const config = await readConfig(path, { URL: 'http://127.0.0.1:7575' });
  expect(config.ledger.endpoint).toEqual({ kind: 'url', url: 'http://127.0.0.1:7575' });
  expect(config.rules).toEqual([join(dir, 'rules')]);
});

it('turns an invalid config into a UsageError (exit 2) carrying the ConfigError', async () => {
  const path = join(dir, 'bot.config.yaml');
  writeFileSync(path, 'ledger:\n  url: http://x\n  userId: bot\nrules: r\nlogg: {}\n');
  const err = await usageError(readConfig(path, {}));
  expect(err.message).toBe(
    `${path}:5:1: unknown key "logg" in the top level\n    hint: did you mean "log"?`,
  );
  expect(err.cause).toBeInstanceOf(ConfigError);
});

it('says what is wrong with an unreadable path', async () => {
  const missing = join(dir, 'nope.yaml');
  expect((await usageError(readConfig(missing, {}))).message).toBe(
    `cannot read the config file ${missing}: there is no such file; pass the right one with --config PATH`,
  );
  expect((await usageError(readConfig(dir, {}))).message).toContain('it is a directory');
});
