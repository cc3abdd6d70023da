import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, type CliResult } from '../support/cli-capture.js';
import { ACCEPT_SMALL_RULES, invoiceRuleTest } from './invoice-rule-test-fixtures.js';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { notARuleTest } from '../../src/cli/commands/test-command.js';

// `ledgerbot test` without paths: the config's `tests:` (default tests/ beside the config), with
// rule test files recognised by content. And its colours.

const root = new URL('../../', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'ledgerbot-test-project-'));
const cwd = process.cwd();
afterEach(() => {
  process.chdir(cwd);
  vi.unstubAllEnvs();
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function run(args: string[], options: { isTTY?: boolean } = {}): Promise<CliResult> {
  return cli(['test', ...args], options);
}

const PROMETHEUS_TEST = `rule_files: [alerts.yaml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series: []
`;

const CONFIG = 'ledger:\n  url: http://127.0.0.1:7575\n  userId: bot\nrules: rules/\n';

/** A project: bot.config.yaml, rules/, and `files` (path relative to the project: text). */
function project(name: string, files: Record<string, string>, config = CONFIG): string {
  const dir = join(tmp, name);
  mkdirSync(join(dir, 'rules'), { recursive: true });
  writeFileSync(join(dir, 'bot.config.yaml'), config);
  writeFileSync(join(dir, 'rules', 'rules.yaml'), ACCEPT_SMALL_RULES);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

describe('ledgerbot test without paths', () => {
  it("runs the config's tests/ (from the config's directory), skipping other YAML with a note", async () => {
    const dir = project('default', {
      'tests/small.test.yaml': invoiceRuleTest(
        '5',
        '[{ rule: accept-small, exercise: { contractId: "00a" } }]',
      ),
      // Recognised by content, whatever the name.
      'tests/large.yaml': invoiceRuleTest('5000', '[]'),
      'tests/alerts.test.yaml': PROMETHEUS_TEST,
      'tests/fixtures/rules.yaml': ACCEPT_SMALL_RULES,
      // Outside tests/: never looked at.
      'docs/other.test.yaml': PROMETHEUS_TEST,
    });
    process.chdir(dir);
    const { code, out, err } = await run([]);
    expect(out).toContain(`${join('tests', 'small.test.yaml')}\n  ✓ invoice of 5\n`);
    expect(out).toContain(`${join('tests', 'large.yaml')}\n  ✓ invoice of 5000\n`);
    expect(out.endsWith('\n2 passed, 0 failed\n')).toBe(true);
    expect(err).toContain(
      `note: skipped ${join('tests', 'alerts.test.yaml')}: a Prometheus rule test (\`rule_files:\`)`,
    );
    expect(err).toContain(`note: skipped ${join('tests', 'fixtures', 'rules.yaml')}: a rule file`);
    expect(err).not.toContain('docs');
    expect(code).toBe(0);
  });

  it('follows --config, and its `tests:` list relative to the config file', async () => {
    const dir = project(
      'listed',
      {
        'checks/a.test.yaml': invoiceRuleTest('5', '[]'),
        'more/b.test.yaml': invoiceRuleTest('5000', '[]'),
        'tests/never.test.yaml': invoiceRuleTest('5000', '[{ rule: accept-small }]'),
      },
      `${CONFIG}tests: [checks, more/b.test.yaml]\n`,
    );
    const { code, out } = await run(['--config', join(dir, 'bot.config.yaml')]);
    expect(out).toContain('a.test.yaml\n  ✗ invoice of 5\n');
    expect(out).toContain('b.test.yaml\n  ✓ invoice of 5000\n');
    expect(out).not.toContain('never');
    expect(out.endsWith('\n1 passed, 1 failed\n')).toBe(true);
    expect(code).toBe(1);
  });

  it('needs no credentials: an unset secret variable in the config is ignored', async () => {
    const dir = project(
      'secret',
      { 'tests/a.test.yaml': invoiceRuleTest('5000', '[]') },
      `${CONFIG}http:\n  port: 9464\n  token: \${LEDGERBOT_TEST_UNSET_TOKEN_X}\n`,
    );
    process.chdir(dir);
    const { code, out } = await run([]);
    expect(out).toContain('✓ invoice of 5000');
    expect(code).toBe(0);
  });

  it('exits 2 when the tests directory is missing, naming it and the config', async () => {
    const dir = project('no-tests', {});
    process.chdir(dir);
    const { code, err } = await run([]);
    expect(err).toMatch(/no rule tests: tests does not exist \(`tests:` of bot\.config\.yaml/);
    expect(code).toBe(2);
    const bad = await run(['--config', join(dir, 'nope.yaml')]);
    expect(bad.err).toMatch(/cannot read the config file .*nope\.yaml/);
    expect(bad.code).toBe(2);
  });

  it('exits 2 when every YAML file there is something else', async () => {
    const dir = project('only-prometheus', { 'tests/alerts.test.yaml': PROMETHEUS_TEST });
    process.chdir(dir);
    const { code, err } = await run([]);
    expect(err).toContain('note: skipped');
    expect(err).toMatch(/no rule test files found in tests \(`tests:` of bot\.config\.yaml/);
    expect(code).toBe(2);
  });

  it('without a bot.config.yaml, searches the current directory for *.test.yaml', async () => {
    const dir = join(tmp, 'no-config');
    mkdirSync(join(dir, 'rules'), { recursive: true });
    writeFileSync(join(dir, 'rules', 'rules.yaml'), ACCEPT_SMALL_RULES);
    writeFileSync(
      join(dir, 'rules', 'a.test.yaml'),
      invoiceRuleTest('5000', '[]').replace('../rules', '.'),
    );
    writeFileSync(join(dir, 'alerts.test.yaml'), PROMETHEUS_TEST);
    process.chdir(dir);
    const { code, out, err } = await run([]);
    expect(err).toContain('note: no bot.config.yaml here: searching the current directory');
    expect(err).toContain('note: skipped alerts.test.yaml: a Prometheus rule test');
    expect(out).toContain('✓ invoice of 5000');
    expect(code).toBe(0);
  });

  it('from the repository root: runs tests/, not docs/alerts.test.yaml', async () => {
    process.chdir(root);
    const { code, out, err } = await run([]);
    expect(out).toContain(join('tests', 'rules.test.yaml'));
    expect(out).toMatch(/\n\d+ passed, 0 failed\n$/);
    expect(`${out}${err}`).not.toContain('alerts');
    expect(code).toBe(0);
  });

  it('given docs/, skips the Prometheus test file with a note instead of failing on it', async () => {
    const { code, err } = await run([join(root, 'docs')]);
    expect(err).toContain(`note: skipped ${join(root, 'docs', 'alerts.test.yaml')}: a Prometheus`);
    expect(code).toBe(2);
  });
});

describe('recognising rule test files', () => {
  it('by their content', () => {
    expect(notARuleTest('a.yaml', invoiceRuleTest('5', '[]'))).toBeUndefined();
    expect(notARuleTest('a.yaml', PROMETHEUS_TEST)).toMatch(/Prometheus/);
    expect(notARuleTest('a.yaml', ACCEPT_SMALL_RULES)).toMatch(/a rule file/);
    expect(notARuleTest('a.yaml', 'just: text\n')).toMatch(/not a rule test file/);
    expect(notARuleTest('a.yaml', '- a list\n')).toMatch(/not a rule test file/);
    // A test file missing `rules:`, or with broken YAML, is reported when named like one.
    expect(notARuleTest('a.test.yaml', 'tests: []\n')).toBeUndefined();
    expect(notARuleTest('a.test.yaml', 'rules: [\n')).toBeUndefined();
    expect(notARuleTest('a.yaml', 'rules: [\n')).toBe('not valid YAML');
  });
});

describe('colour', () => {
  const failing = (): string =>
    project('colour', {
      'tests/a.test.yaml': invoiceRuleTest(
        '5',
        '[{ rule: accept-small, exercise: { contractId: "00b" } }]',
      ),
      'tests/b.test.yaml': invoiceRuleTest('5000', '[]'),
    });
  const ESC = '\u001b[';

  it('on a terminal: ✓ green, ✗ red, locations cyan, the diff red and green', async () => {
    vi.stubEnv('NO_COLOR', '');
    const { code, out } = await run([failing()], { isTTY: true });
    expect(out).toContain(`${ESC}32m✓${ESC}39m invoice of 5000`);
    expect(out).toContain(`${ESC}31m✗ invoice of 5${ESC}39m`);
    expect(out).toMatch(new RegExp(`at \\u001b\\[36m\\S+a\\.test\\.yaml:\\d+:\\d+\\u001b\\[39m`));
    expect(out).toContain(`${ESC}31m- exercise.contractId: "00b"${ESC}39m`);
    expect(out).toContain(`${ESC}32m+ exercise.contractId: "00a"${ESC}39m`);
    expect(out).toContain(`${ESC}31m1 failed${ESC}39m`);
    expect(code).toBe(1);
  });

  it('problems: file:line:col cyan, the message red', async () => {
    vi.stubEnv('NO_COLOR', '');
    const dir = project('colour-bad', {
      'tests/bad.test.yaml': 'rules: ../rules\nparties: {}\ntests:\n  - name: x\n    expct: []\n',
    });
    const { code, out } = await run([dir], { isTTY: true });
    expect(out).toContain(
      `${ESC}36m${join(dir, 'tests', 'bad.test.yaml')}:5:5:${ESC}39m${ESC}31m unknown key`,
    );
    expect(out).toContain(`    ${ESC}2mhint: did you mean`);
    expect(code).toBe(2);
  });

  it('off with --no-color, with NO_COLOR, and when stdout is not a terminal', async () => {
    const dir = failing();
    vi.stubEnv('NO_COLOR', '');
    expect((await run(['--no-color', dir], { isTTY: true })).out).not.toContain(ESC);
    expect((await run([dir], { isTTY: false })).out).not.toContain(ESC);
    expect((await run([dir])).out).not.toContain(ESC);
    vi.stubEnv('NO_COLOR', '1');
    expect((await run([dir], { isTTY: true })).out).not.toContain(ESC);
  });
});
