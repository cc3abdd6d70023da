import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, type CliResult } from '../support/cli-capture.js';

const root = new URL('../../', import.meta.url).pathname;
const at = (p: string): string => join(root, p);
const tmp = mkdtempSync(join(tmpdir(), 'ledgerbot-validate-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function run(args: string[]): Promise<CliResult> {
  return cli(['validate', ...args]);
}

describe('ledgerbot validate', () => {
  it('accepts the invoices example with the config and the model, exit 0', async () => {
    const { code, out, err } = await run([
      '--config',
      at('bot.config.yaml'),
      '--offline',
      '--model',
      at('examples/invoices/model.yaml'),
      at('examples/invoices/rules'),
    ]);
    expect(out).toBe('4 file(s), 4 rule(s): valid\n');
    expect(err).toBe(
      `note: types from 1 package from the model ${at('examples/invoices/model.yaml')} (invoices 1.0.0)\n`,
    );
    expect(code).toBe(0);
  });

  it('without --config or --model says what it did not check', async () => {
    const { code, err } = await run([at('examples/invoices/rules/weekday-reminders.yaml')]);
    expect(code).toBe(0);
    expect(err).toBe(
      'note: party aliases were not checked: pass --config bot.config.yaml to check them\n' +
        'note: templates and choices were not checked: pass --dar FILE or --model FILE (or a config with packages) to check them\n',
    );
  });

  it('prints file:line:col problems with hints and exits 2', async () => {
    const file = join(tmp, 'bad.yaml');
    writeFileSync(
      file,
      [
        'version: 1',
        'rules:',
        '  - id: bad',
        '    on: { created: "#invoices:Invoice:Invoice", party: payr }',
        '    then:',
        '      - exercise: { template: "#invoices:Invoice:Invoice", contractId: x, choice: Acept }',
        '        actAs: [payer]',
        '',
      ].join('\n'),
    );
    const { code, out } = await run([
      '--config',
      at('bot.config.yaml'),
      '--offline',
      '--model',
      at('examples/invoices/model.yaml'),
      file,
    ]);
    expect(out).toBe(
      [
        `${file}:4:56: unknown party alias "payr"`,
        '    hint: did you mean "payer"?',
        `${file}:6:83: template Invoice:Invoice has no choice "Acept"`,
        '    hint: did you mean "Accept"?',
        '1 file(s): 2 error(s), 0 warning(s)',
        '',
      ].join('\n'),
    );
    expect(code).toBe(2);
  });

  it('--format json gives the problems as data', async () => {
    const file = join(tmp, 'warn.yaml');
    writeFileSync(
      file,
      `version: 1\nrules:\n  - id: w\n    on: { created: "${'a'.repeat(64)}:Invoice:Invoice", party: payer }\n    then: [{ create: { template: "#invoices:Payment:Receipt", createArguments: {} }, actAs: payer }]\n`,
    );
    const { code, out } = await run(['--format', 'json', file]);
    expect(code).toBe(0);
    const report = JSON.parse(out) as Record<string, unknown>;
    expect(report).toMatchObject({
      valid: true,
      files: [file],
      rules: ['w'],
      errors: 0,
      warnings: 1,
      problems: [{ file, line: 4, col: 20, code: 'PACKAGE_ID_REF', severity: 'warning' }],
    });
  });

  it('loads a directory whole, skipping *.test.yaml, and finds duplicates across files', async () => {
    const dir = join(tmp, 'rules');
    const rule = (id: string): string =>
      `version: 1\nrules:\n  - id: ${id}\n    schedule: { cron: "@daily" }\n    then: [{ create: { template: "#invoices:Payment:Receipt", createArguments: {} }, actAs: payer }]\n`;
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.yaml'), rule('same'));
    writeFileSync(join(dir, 'b.yml'), rule('same'));
    writeFileSync(join(dir, 'c.test.yaml'), 'not: a rule file\n');
    writeFileSync(join(dir, 'notes.txt'), 'ignored\n');
    const { code, out } = await run([dir]);
    expect(out).toBe(
      `${join(dir, 'b.yml')}:3:9: duplicate rule id "same": it is also used at ${join(dir, 'a.yaml')}:3:9\n` +
        '    hint: rule ids are unique across all rule files; rename one of them\n' +
        '2 file(s): 1 error(s), 0 warning(s)\n',
    );
    expect(code).toBe(2);
  });

  it('uses the config rules: entry when no paths are given', async () => {
    const config = join(tmp, 'bot.config.yaml');
    writeFileSync(
      config,
      'ledger: { url: "http://127.0.0.1:7575", userId: bot }\nparties: { payer: P::1 }\nrules: rules-from-config/\n',
    );
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(tmp, 'rules-from-config'));
    writeFileSync(
      join(tmp, 'rules-from-config', 'r.yaml'),
      'version: 1\nrules:\n  - id: r\n    schedule: { cron: "@daily" }\n    then: [{ create: { template: "#invoices:Payment:Receipt", createArguments: {} }, actAs: issuer }]\n',
    );
    const { code, out } = await run(['--config', config, '--offline']);
    expect(out).toContain(':5:93: unknown party alias "issuer"');
    expect(code).toBe(2);
  });

  it('with an embedded config, checks its allocated aliases and its models, and the config itself', async () => {
    const example = fileURLToPath(
      new URL('../../examples/invoices/bot.config.yaml', import.meta.url),
    );
    const ok = await run(['--config', example]);
    expect(ok.out).toMatch(/4 file\(s\), 4 rule\(s\): valid/);
    expect(ok.err).not.toContain('templates and choices were not checked');
    expect(ok.code).toBe(0);
    const broken = join(tmp, 'broken.config.yaml');
    writeFileSync(broken, 'ledger: { ur: "http://127.0.0.1:7575", userId: bot }\n');
    const bad = await run(['--config', broken]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/broken\.config\.yaml:1:\d+/);
  });

  it('usage errors exit 2 with a message', async () => {
    expect((await run([join(tmp, 'missing.yaml')])).code).toBe(2);
    const bad = await run(['--format', 'xml', at('rules')]);
    expect(bad.code).toBe(2);
    expect(bad.err).toBe('ledgerbot: --format must be text or json, not "xml"\n');
  });

  it('names the first byte of a rule file or config that is not UTF-8 (Latin-1), exit 2', async () => {
    const rules = join(tmp, 'latin1.yaml');
    // "café" as Latin-1: é is the single byte 0xE9.
    writeFileSync(rules, Buffer.from('version: 1\nrules:\n  - id: caf\xe9\n', 'latin1'));
    const r = await run([rules]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `ledgerbot: ${rules}:3:12: the file is not UTF-8 text (an editor saved it as Latin-1 or Windows-1252?): save it as UTF-8\n`,
    );
    const config = join(tmp, 'latin1.config.yaml');
    writeFileSync(config, Buffer.from('# Zürich\nledger: { url: http://x }\n', 'latin1'));
    const c = await run(['--config', config]);
    expect(c.code).toBe(2);
    expect(c.err).toContain(`${config}:1:4: the config file is not UTF-8 text`);
    // A UTF-8 file with the same letters is fine as far as its encoding goes.
    writeFileSync(rules, 'version: 1\nrules:\n  - id: café\n');
    expect((await run([rules])).err).not.toContain('UTF-8');
  });
});
