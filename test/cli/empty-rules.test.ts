import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cli } from '../support/cli-capture.js';

// No rule file where `rules:` points is an error (exit 2, for run and validate alike); rule
// files whose rules are all disabled are a warning (validate exits 0; run starts idle, see
// run-idle.test.ts).

const MODEL = fileURLToPath(new URL('../../examples/invoices/model.yaml', import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The example's accept rule, disabled. */
const DISABLED = readFileSync(
  fileURLToPath(
    new URL('../../examples/invoices/rules/accept-small-invoices.yaml', import.meta.url),
  ),
  'utf8',
).replace('  - id: accept-small-invoices\n', '  - id: accept-small-invoices\n    enabled: false\n');

/** A config dir whose `rules:` is `rules/`, holding `files`; returns the config path. */
function setup(files: Readonly<Record<string, string>>): { config: string; rules: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerbot-empty-rules-'));
  dirs.push(dir);
  const rules = join(dir, 'rules');
  mkdirSync(rules);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(rules, name), text);
  const config = join(dir, 'bot.config.yaml');
  writeFileSync(
    config,
    [
      'ledger:',
      `  embedded: { models: [${MODEL}], parties: [payer] }`,
      '  userId: ledgerbot',
      'rules: rules/',
      `state: { dir: ${join(dir, 'state')} }`,
      'log: { level: silent }',
      '',
    ].join('\n'),
  );
  return { config, rules };
}

describe('no rule files', () => {
  // A file that is not a rule file (a rule test, a README) does not count.
  const files = { 'settle.test.yaml': 'rule: settle\n', 'README.md': '# rules\n' };

  it('run exits 2 naming the directory and the pattern', async () => {
    const { config, rules } = setup(files);
    const r = await cli(['run', '--config', config]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`no rule files in ${rules}`);
    expect(r.err).toContain('*.yaml, *.yml');
  });

  it('validate exits 2 with the same message', async () => {
    const { config, rules } = setup(files);
    const r = await cli(['validate', '--config', config]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('no rule files in ');
    expect(r.err).toContain('*.yaml, *.yml');
    // validate names the path as given (relative to the working directory).
    expect(resolve(r.err.match(/no rule files in (\S+):/)![1]!)).toBe(rules);
  });
});

describe('all rules disabled', () => {
  it('validate prints a warning and exits 0', async () => {
    const { config } = setup({ 'settle.yaml': DISABLED });
    const r = await cli(['validate', '--config', config, '--model', MODEL]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^warning: no rule is enabled: all 1 rule\(s\).*enabled: false/m);
    expect(r.out).toContain('1 file(s), 1 rule(s): valid');
  });

  it('validate --format json lists the warning in notes', async () => {
    const { config } = setup({ 'settle.yaml': DISABLED });
    const r = await cli(['validate', '--config', config, '--model', MODEL, '--format', 'json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as { valid: boolean; notes: string[] };
    expect(doc.valid).toBe(true);
    expect(doc.notes.some((n) => n.startsWith('no rule is enabled'))).toBe(true);
  });

  it('a file with no rules at all is the same warning', async () => {
    const { config } = setup({ 'none.yaml': 'version: 1\nrules: []\n' });
    const r = await cli(['validate', '--config', config, '--model', MODEL]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^warning: no rule is enabled: the 1 rule file\(s\) define no rule/m);
  });
});
