import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readConfig } from '../../src/cli/compose/read-config.js';
import { ruleReloader, watchRuleFiles } from '../../src/cli/compose/rule-reloader.js';
import { rootLogger } from '../../src/cli/compose/root-logger.js';
import type { Bot } from '../../src/runtime/bot.js';
import { silentLogger } from '../../src/core/logger.js';
import { waitFor } from '../support/wait-for.js';

let dir: string | undefined;
let stop: (() => void) | undefined;

afterEach(() => {
  stop?.();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('watchRuleFiles', () => {
  it('calls back once for a burst of writes in a watched directory', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerbot-watch-'));
    let calls = 0;
    stop = watchRuleFiles([dir], () => (calls += 1), silentLogger, 100);
    for (let i = 0; i < 5; i++) writeFileSync(join(dir, 'rules.yaml'), `version: 1 # ${i}\n`);
    await waitFor(
      () => calls,
      (n) => n > 0,
      3_000,
      'a call back',
    );
    await new Promise((r) => setTimeout(r, 250));
    expect(calls).toBe(1);
  });

  it('watches a single file through its directory, ignoring its neighbours', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerbot-watch-'));
    const file = join(dir, 'rules.yaml');
    writeFileSync(file, 'version: 1\n');
    let calls = 0;
    stop = watchRuleFiles([file], () => (calls += 1), silentLogger, 50);
    writeFileSync(join(dir, 'other.txt'), 'x');
    await new Promise((r) => setTimeout(r, 200));
    expect(calls).toBe(0);
    writeFileSync(file, 'version: 1\nrules: []\n');
    await waitFor(
      () => calls,
      (n) => n > 0,
      3_000,
      'a call back',
    );
    expect(calls).toBe(1);
  });
});

/** A rules folder holding the accept-small-invoices rule, a config over it, a logger keeping its lines. */
async function project() {
  dir = mkdtempSync(join(tmpdir(), 'ledgerbot-reload-'));
  const rules = join(dir, 'rules');
  mkdirSync(rules);
  const source = readFileSync(
    new URL('../integration/fixtures/rules/accept-small-invoices.yaml', import.meta.url),
    'utf8',
  );
  writeFileSync(join(rules, 'r.yaml'), source);
  const configFile = join(dir, 'bot.config.yaml');
  writeFileSync(
    configFile,
    [
      'ledger: { url: "http://127.0.0.1:1", userId: ledgerbot }',
      'parties: { payer: "Payer::1220aa", issuer: "Issuer::1220bb" }',
      'rules: rules/',
      'state: { dir: state }',
      '',
    ].join('\n'),
  );
  const config = await readConfig(configFile, {});
  const lines: string[] = [];
  const logger = rootLogger(
    { level: 'info' },
    { out: (t) => lines.push(t), err: (t) => lines.push(t) },
  );
  return { rules, source, config, lines, logger };
}

describe('ruleReloader', () => {
  it('applies a reload that leaves no rule enabled, and warns that the bot now idles', async () => {
    const { rules, source, config, lines, logger } = await project();
    const rule = (enabled: boolean): string =>
      source.replace(
        '  - id: accept-small-invoices\n',
        `  - id: accept-small-invoices\n    enabled: ${String(enabled)}\n`,
      );
    writeFileSync(join(rules, 'r.yaml'), rule(true));
    let reloads = 0;
    const bot = {
      reloadRules: () => ((reloads += 1), { added: [], removed: [], changed: [] }),
      metrics: { reloads: { rejected: 0 } },
    };
    const reload = ruleReloader(config, bot as unknown as Bot, logger);

    expect(await reload()).toMatchObject({ applied: true });
    await new Promise((r) => setImmediate(r));
    expect(lines.join('')).not.toMatch(/no rule is enabled|no enabled rule/i);

    writeFileSync(join(rules, 'r.yaml'), rule(false));
    expect((await reload()).applied).toBe(true);
    expect(reloads).toBe(2);
    await new Promise((r) => setImmediate(r));
    expect(lines.join('')).toMatch(/"level":40.*(no rule is enabled|no enabled rule)/i);
  });

  it('rejects a reload with one problem per mistake, its hint under it, and logs it so', async () => {
    const { rules, source, config, lines, logger } = await project();
    const bot = { reloadRules: () => ({}), metrics: { reloads: { rejected: 0 } } };
    const reload = ruleReloader(config, bot as unknown as Bot, logger);
    // One mistake with a did-you-mean hint: party alias payr.
    writeFileSync(join(rules, 'r.yaml'), source.replace('party: payer', 'party: payr'));
    const outcome = await reload();
    expect(outcome.applied).toBe(false);
    const errors = (outcome as { errors: readonly string[] }).errors;
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /r\.yaml:\d+:\d+: unknown party alias "payr"\n\s+hint: did you mean "payer"\?$/,
    );
    await new Promise((r) => setImmediate(r));
    const logged = lines
      .join('')
      .split('\n')
      .filter((l) => l.includes('"msg":"rule problem"'));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('did you mean');
    expect(lines.join('')).toContain('"problems":1');
  });
});
