import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, type CliResult } from '../support/cli-capture.js';
import { ACCEPT_SMALL_RULES, invoiceRuleTest } from './invoice-rule-test-fixtures.js';
import { afterAll, describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'ledgerbot-test-cmd-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function run(args: string[], options: { isTTY?: boolean } = {}): Promise<CliResult> {
  return cli(['test', ...args], options);
}

function project(name: string, rules: string, tests: Record<string, string>): string {
  const dir = join(tmp, name);
  mkdirSync(join(dir, 'rules'), { recursive: true });
  mkdirSync(join(dir, 'tests'), { recursive: true });
  writeFileSync(join(dir, 'rules', 'rules.yaml'), rules);
  for (const [file, text] of Object.entries(tests)) writeFileSync(join(dir, 'tests', file), text);
  return dir;
}

describe('ledgerbot test', () => {
  it('passes the invoices example tests, exit 0', async () => {
    const { code, out } = await run([join(root, 'examples/invoices/tests')]);
    expect(out).toContain('✓ the payer accepts a small USD invoice');
    expect(out).not.toContain('✗');
    expect(out).toMatch(/\n\d+ passed, 0 failed\n$/);
    expect(code).toBe(0);
  });

  it('reports failures with a diff and exits 1', async () => {
    const dir = project('failing', ACCEPT_SMALL_RULES, {
      'a.test.yaml': invoiceRuleTest(
        '5',
        '[{ rule: accept-small, exercise: { contractId: "00b" } }]',
      ),
      'b.test.yaml': invoiceRuleTest('5000', '[]'),
    });
    const { code, out } = await run([dir]);
    expect(out).toContain(`${join(dir, 'tests', 'a.test.yaml')}\n  ✗ invoice of 5\n`);
    expect(out).toContain(
      '        - exercise.contractId: "00b"\n        + exercise.contractId: "00a"\n',
    );
    expect(out).toContain('  ✓ invoice of 5000\n');
    expect(out.endsWith('\n1 passed, 1 failed\n')).toBe(true);
    expect(code).toBe(1);
  });

  it('prints why each rule did (not) fire with --verbose', async () => {
    const dir = project('verbose', ACCEPT_SMALL_RULES, {
      'a.test.yaml': invoiceRuleTest('5000', '[]'),
    });
    const { code, out } = await run(['--verbose', dir]);
    expect(out).toContain('accept-small (');
    expect(out).toContain('→ false');
    expect(code).toBe(0);
  });

  it('exits 2 on a bad test file, with file:line:col', async () => {
    const dir = project('bad', ACCEPT_SMALL_RULES, {
      'bad.test.yaml':
        'rules: ../rules\nparties: {}\ntests:\n  - name: x\n    expct: []\n    given: []\n',
      'good.test.yaml': invoiceRuleTest('5000', '[]'),
    });
    const file = join(dir, 'tests', 'bad.test.yaml');
    const { code, out } = await run([dir]);
    expect(out).toContain(`${file}:5:5: unknown key "expct"\n    hint: did you mean \`expect\`?\n`);
    expect(out).toContain('1 passed, 0 failed, 1 file(s) with errors');
    expect(code).toBe(2);
  });

  it('exits 2 when the rules under test have errors or cannot be read', async () => {
    const broken = project('broken-rules', 'version: 1\nrules:\n  - id: Bad Id\n', {
      'a.test.yaml': invoiceRuleTest('5', '[]'),
    });
    const a = await run([broken]);
    expect(a.out).toMatch(
      /a\.test\.yaml:1:8: the rules this file tests have errors:\n.*rules\.yaml:3:/,
    );
    expect(a.code).toBe(2);

    const missing = project('missing-rules', ACCEPT_SMALL_RULES, {
      'a.test.yaml': invoiceRuleTest('5', '[]').replace('rules: ../rules', 'rules: ../nope'),
    });
    const b = await run([missing]);
    expect(b.out).toMatch(/a\.test\.yaml:1:8: cannot read .*nope: no such file or directory/);
    expect(b.code).toBe(2);
  });

  it('reads rules named by an absolute path as they are, not below the test file', async () => {
    const dir = project('absolute-rules', ACCEPT_SMALL_RULES, {});
    writeFileSync(
      join(dir, 'tests', 'a.test.yaml'),
      invoiceRuleTest('5000', '[]').replace('rules: ../rules', `rules: ${join(dir, 'rules')}`),
    );
    const { code, out } = await run([dir]);
    expect(out).toContain('  ✓ invoice of 5000\n');
    expect(code).toBe(0);
  });

  it('is a usage error when there are no test files', async () => {
    const empty = join(tmp, 'empty');
    mkdirSync(empty, { recursive: true });
    const { code, err } = await run([empty]);
    expect(err).toMatch(/no rule test files found in /);
    expect(code).toBe(2);
  });
});
