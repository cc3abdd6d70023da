import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSI_COLOUR } from '../../src/cli/present/colour.js';
import { terminalSafe } from '../../src/cli/present/terminal-safe.js';
import { ensureBuilt } from '../integration/child-bot.js';
import { tempDir } from '../support/temp-dir.js';

const ESC = '\u001b';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('terminalSafe', () => {
  it('leaves ordinary text, tabs, newlines and CRLF line ends as they are', () => {
    const text = 'rule "accept-small"\tfired\r\nnext line: Zürich, 日本, 🙂\n';
    expect(terminalSafe(text)).toBe(text);
  });

  it('writes the controls a terminal acts on as \\u escapes', () => {
    expect(terminalSafe(`x${ESC}]0;PWNED\u0007${ESC}[2J`)).toBe(
      'x\\u001b]0;PWNED\\u0007\\u001b[2J',
    );
    expect(terminalSafe('ok\rFAKE')).toBe('ok\\u000dFAKE');
    expect(terminalSafe('a\bb\u007fc\u009b31m')).toBe('a\\u0008b\\u007fc\\u009b31m');
    expect(terminalSafe('invoice \u202eexe.fdp')).toBe('invoice \\u202eexe.fdp');
    expect(terminalSafe('\u2066x\u2069\u200f')).toBe('\\u2066x\\u2069\\u200f');
  });

  it("keeps the CLI's colours, but not the SGR that hides text", () => {
    const painted = `${ANSI_COLOUR.red('error')} ${ANSI_COLOUR.dim('hint')}`;
    expect(terminalSafe(painted)).toBe(painted);
    expect(terminalSafe(`${ESC}[1;31mbold red${ESC}[0m`)).toBe(`${ESC}[1;31mbold red${ESC}[0m`);
    expect(terminalSafe(`a${ESC}[8msecret${ESC}[28m`)).toBe(`a\\u001b[8msecret${ESC}[28m`);
  });

  it('keeps a JSON log line valid JSON, with the same value', () => {
    const line = `${JSON.stringify({ msg: 'intent finished', note: 'a\u0085b\u202ec' })}\n`;
    const safe = terminalSafe(line);
    expect(safe).not.toMatch(/[\u0085\u202e]/);
    expect(JSON.parse(safe)).toEqual(JSON.parse(line));
  });
});

describe('the CLI writes no terminal controls from its input', () => {
  const dir = tempDir('ledgerbot-terminal-safe-');
  beforeAll(() => ensureBuilt(), 180_000);
  afterAll(() => dir.cleanup());

  it('escapes a rule file that would set the title and clear the screen', () => {
    const file = join(dir.dir, 'hostile.yaml');
    writeFileSync(
      file,
      [
        'version: 1',
        'rules:',
        '  - id: "x\\e]0;PWNED\\a\\e[2J\\rspoofed"',
        '    on: { created: "#invoices:Invoice:Invoice", party: payer }',
        '    then:',
        '      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "${{ event.contractId }}", choice: Accept }',
        '        actAs: [payer]',
        '',
      ].join('\n'),
    );
    const r = spawnSync(process.execPath, ['bin/ledgerbot.js', 'validate', file], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(2);
    const all = r.stdout + r.stderr;
    expect(all).toContain(
      `${file}:3:9: rule id "x\\u001b]0;PWNED\\u0007\\u001b[2J\\u000dspoofed" is not a slug`,
    );
    // eslint-disable-next-line no-control-regex -- none may reach the terminal
    expect(all).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });
});
