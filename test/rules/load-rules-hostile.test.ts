import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadRules } from '../../src/rules/load-rules.js';

const DIR = new URL('../fixtures/rules/hostile/', import.meta.url);
const fixture = (name: string): { path: string; text: string } => ({
  path: name,
  text: readFileSync(new URL(name, DIR), 'utf8'),
});

/** Loads and returns problems as `line:col code message`, and how long loading took. */
function timed(files: { path: string; text: string }[]): { out: string[]; ms: number } {
  const start = performance.now();
  const { problems } = loadRules(files, { parties: ['payer', 'issuer'] });
  const ms = performance.now() - start;
  return { out: problems.map((p) => `${p.line}:${p.col} ${p.code} ${p.message}`), ms };
}

const RULE_TAIL = [
  '    on:',
  '      created: "#invoices:Invoice:Invoice"',
  '      party: payer',
  '    then:',
  '      - create: { template: "#invoices:Payment:Receipt", createArguments: {} }',
  '        actAs: [payer]',
  '',
].join('\n');

// Generous bounds: they catch exponential blow-ups, not slow machines.
const BOUND_MS = 2000;

describe('loadRules: hostile input yields a clear error in bounded time', () => {
  it('billion laughs: alias expansion is capped', () => {
    const { out, ms } = timed([fixture('billion-laughs.yaml')]);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^1:1 YAML_TOO_COMPLEX the file expands too many aliases/);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it('deep flow nesting is refused before the parser sees it', () => {
    const depth = 100_000;
    const text = `version: 1\nrules: ${'['.repeat(depth)}${']'.repeat(depth)}\n`;
    const { out, ms } = timed([{ path: 'deep.yaml', text }]);
    expect(out).toEqual([
      '2:72 YAML_TOO_COMPLEX brackets nest more than 64 deep: rule files do not nest that deep',
    ]);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it('brackets hidden behind a stray quote still count', () => {
    const text = `version: 1\nrules: x "y\nz: ${'['.repeat(5000)}\n`;
    const { out } = timed([{ path: 'q.yaml', text }]);
    expect(out).toEqual([
      '3:1004 YAML_TOO_COMPLEX more than 1000 brackets are open at once: rule files do not nest that deep',
    ]);
  });

  it('deep block nesting is refused by its indentation', () => {
    const lines = ['version: 1', 'rules:'];
    for (let i = 0; i < 2000; i++) lines.push(`${' '.repeat(2 + i)}k${i}:`);
    const { out, ms } = timed([{ path: 'block.yaml', text: lines.join('\n') }]);
    expect(out).toEqual([
      '258:257 YAML_TOO_COMPLEX a line is indented more than 256 spaces: rule files do not nest that deep',
    ]);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it('a 10 MB file is refused by size, without parsing', () => {
    const rule = `  - id: r\n    description: "${'x'.repeat(1000)}"\n`;
    const text = `version: 1\nrules:\n${rule.repeat(10_000)}`;
    expect(text.length).toBeGreaterThan(10_000_000);
    const { out, ms } = timed([{ path: 'big.yaml', text }]);
    expect(out).toEqual([
      '1:1 FILE_TOO_LARGE the file is 9.8 MiB, more than the 4.0 MiB a rule file may have: split it into several files in the rules directory',
    ]);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it('counts bytes, not characters: multi-byte text cannot slip past the cap', () => {
    const text = `version: 1\nrules: []\n# ${'é'.repeat(600)}\n`;
    const { problems } = loadRules([{ path: 'u.yaml', text }], { maxFileBytes: 1024 });
    expect(text.length).toBeLessThan(1024);
    expect(problems.map((p) => p.code)).toEqual(['FILE_TOO_LARGE']);
  });

  it('CEL that nests comprehensions (the closest CEL has to loops) is refused', () => {
    const { out } = timed([fixture('cel-loop.yaml')]);
    expect(out).toEqual([
      '7:41 CEL_TOO_COMPLEX CEL: comprehensions (all, exists, map, filter) nest 3 deep; at most 2 are allowed',
    ]);
  });

  it('CEL cannot reach outside its variables', () => {
    const { out } = timed([fixture('cel-escape.yaml')]);
    expect(out).toEqual(['7:11 CEL_COMPILE_ERROR CEL: Unknown variable: process']);
  });

  it('an overlong expression is refused', () => {
    const when = Array.from({ length: 800 }, (_, i) => `event.a${i}`).join(' || ');
    const text = `version: 1\nrules:\n  - id: long\n    when: "${when}"\n${RULE_TAIL}`;
    const { out } = timed([{ path: 'long.yaml', text }]);
    expect(out).toEqual([
      '4:12 CEL_TOO_COMPLEX the expression is 11086 characters long; at most 4000 are allowed',
    ]);
  });

  it('an overlong template expression is refused', () => {
    const expr = Array.from({ length: 800 }, (_, i) => `event.a${i}`).join(' + ');
    const text = [
      'version: 1',
      'rules:',
      '  - id: long',
      '    on: { created: "#invoices:Invoice:Invoice", party: payer }',
      '    then:',
      `      - create: { template: "#invoices:Payment:Receipt", createArguments: { x: "\${{ ${expr} }}" } }`,
      '        actAs: [payer]',
      '',
    ].join('\n');
    const { out } = timed([{ path: 'long.yaml', text }]);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(
      /^6:85 CEL_TOO_COMPLEX the expression is \d+ characters long; at most 4000 are allowed$/,
    );
  });

  it('unicode look-alikes in ids are named', () => {
    const { out } = timed([fixture('confusable-id.yaml')]);
    expect(out).toEqual([
      '3:9 BAD_RULE_ID rule id "аccept-invoices" contains the non-ASCII character "а" (U+0430); ids are ASCII only, so look-alike letters cannot hide in them',
    ]);
  });

  it('many problems in one file are capped with a summary', () => {
    const rules = Array.from({ length: 300 }, (_, i) => `  - id: r${i}\n    bogus${i}: 1\n`).join(
      '',
    );
    const { problems } = loadRules([{ path: 'many.yaml', text: `version: 1\nrules:\n${rules}` }]);
    expect(problems).toHaveLength(200);
    expect(problems[199]!.message).toMatch(/^\d+ more problems in this file are not shown$/);
  });

  it('thousands of valid rules load quickly', () => {
    const rules = Array.from(
      { length: 2000 },
      (_, i) =>
        `  - id: rule-${i}\n    on: { created: "#invoices:Invoice:Invoice", party: payer }\n    when: decimal(event.createArgument.amount) < decimal("${i}")\n    then:\n      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }\n        actAs: [payer]\n`,
    ).join('');
    const start = performance.now();
    const { problems, ruleSet } = loadRules([
      { path: 'k.yaml', text: `version: 1\nrules:\n${rules}` },
    ]);
    expect(problems).toEqual([]);
    expect(ruleSet.rules).toHaveLength(2000);
    expect(performance.now() - start).toBeLessThan(10_000);
  });
});
