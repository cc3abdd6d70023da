import { describe, expect, it } from 'vitest';
import { parseYamlSource, type ParsedYamlSource } from '../../../src/core/source/index.js';

const opts = { noun: 'widget file' };

function problems(parsed: ParsedYamlSource): string[] {
  if (parsed.ok) return [];
  return parsed.problems.map((p) => `${p.file}:${p.line}:${p.col} ${p.code} ${p.message}`);
}

describe('parseYamlSource', () => {
  it('parses a file into plain data with a locator', () => {
    const parsed = parseYamlSource('w.yaml', 'a: 1\nb:\n  - x\n', opts);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.source.value).toEqual({ a: 1, b: ['x'] });
    expect(parsed.source.at.pos(['b', 0])).toEqual({ file: 'w.yaml', line: 3, col: 5 });
  });

  it('refuses an alias explosion ("billion laughs") without expanding it', () => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      lines.push(`${name}: &${name} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}]`);
    }
    expect(problems(parseYamlSource('bomb.yaml', `${lines.join('\n')}\n`, opts))).toEqual([
      expect.stringMatching(/^bomb\.yaml:1:1 YAML_TOO_COMPLEX the file expands too many aliases/),
    ]);
  });

  it('takes the alias limit of the loader', () => {
    const text = 'a: &a x\nb: [*a, *a, *a]\n';
    expect(parseYamlSource('w.yaml', text, opts).ok).toBe(true);
    expect(
      problems(parseYamlSource('w.yaml', text, { ...opts, limits: { maxAliases: 2 } })),
    ).toEqual([expect.stringMatching(/^w\.yaml:1:1 YAML_TOO_COMPLEX/)]);
  });

  it('refuses a huge file before parsing it, naming the kind of file and the advice', () => {
    const parsed = parseYamlSource('big.yaml', `a: "${'x'.repeat(2048)}"\n`, {
      ...opts,
      limits: { maxBytes: 1024 },
      tooLargeAdvice: 'split it',
    });
    expect(problems(parsed)).toEqual([
      'big.yaml:1:1 FILE_TOO_LARGE the file is 3 KiB, more than the 1 KiB a widget file may have: split it',
    ]);
  });

  it('counts bytes, not characters', () => {
    const text = `a: "${'é'.repeat(600)}"\n`; // 600 characters, 1,200 bytes
    expect(parseYamlSource('w.yaml', text, { ...opts, limits: { maxBytes: 1024 } }).ok).toBe(false);
    expect(parseYamlSource('w.yaml', text, { ...opts, limits: { maxBytes: 2048 } }).ok).toBe(true);
  });

  it('refuses deep flow nesting at the bracket that is one too deep', () => {
    const text = `a: 1\nb: ${'['.repeat(70)}${']'.repeat(70)}\n`;
    expect(problems(parseYamlSource('deep.yaml', text, opts))).toEqual([
      'deep.yaml:2:68 YAML_TOO_COMPLEX brackets nest more than 64 deep: widget files do not nest that deep',
    ]);
  });

  it('refuses deep block nesting by indentation', () => {
    const text = `a:\n${'x'}: ${' '.repeat(10)}\n${' '.repeat(20)}b: 1\n`;
    expect(
      problems(parseYamlSource('w.yaml', text, { ...opts, limits: { maxIndent: 8 } })),
    ).toEqual([
      'w.yaml:3:9 YAML_TOO_COMPLEX a line is indented more than 8 spaces: widget files do not nest that deep',
    ]);
  });

  it('does not count brackets inside quotes or comments as nesting', () => {
    const text = `a: "${'['.repeat(100)}" # ${'{'.repeat(100)}\n`;
    expect(parseYamlSource('w.yaml', text, opts).ok).toBe(true);
  });

  it('reports every syntax error, each with its position and without source text', () => {
    const text = 'a: 1\na: 2\nb: 1\nb: 2\n';
    const parsed = parseYamlSource('dup.yaml', text, opts);
    expect(problems(parsed)).toEqual([
      'dup.yaml:2:1 YAML_SYNTAX YAML syntax: Map keys must be unique',
      'dup.yaml:4:1 YAML_SYNTAX YAML syntax: Map keys must be unique',
    ]);
    if (!parsed.ok) expect(parsed.problems[0]!.hint).toMatch(/each key may appear once/);
  });

  it('points an unclosed quote at where it opened', () => {
    const parsed = parseYamlSource('q.yaml', 'a: 1\nb: "open\nc: 2\n', opts);
    expect(problems(parsed)).toEqual([
      'q.yaml:2:4 YAML_SYNTAX YAML syntax: this quote is never closed',
    ]);
  });

  it('says that an unquoted ${VAR} inside { } needs quotes, once per line, without its cascade', () => {
    const text = [
      'a: [1, 2',
      'ledger:',
      '  auth: { type: oauth2, clientId: bot, clientSecret: ${LEDGER_CLIENT_SECRET} }',
      'http: { port: 9464, token: ${TOKEN} } # a comment with ${NOT_THIS}',
      'quoted: { token: "${FINE}" }',
      'block: ${ALSO_FINE}',
      '',
    ].join('\n');
    const parsed = parseYamlSource('c.yaml', text, opts);
    const found = problems(parsed);
    // An error before the first such line is reported as the parser says it.
    expect(found[0]).toMatch(/^c\.yaml:2:1 YAML_SYNTAX YAML syntax: /);
    expect(found.slice(1)).toEqual([
      'c.yaml:3:54 YAML_SYNTAX YAML syntax: ${LEDGER_CLIENT_SECRET} inside { } or [ ] needs quotes',
      'c.yaml:4:28 YAML_SYNTAX YAML syntax: ${TOKEN} inside { } or [ ] needs quotes',
    ]);
    if (!parsed.ok) {
      expect(parsed.problems[1]!.hint).toBe(
        'write "${LEDGER_CLIENT_SECRET}": in a flow mapping or list, { and } cannot be part of a plain value',
      );
    }
    const fine = parseYamlSource('f.yaml', 'x: { token: "${A}" }\ny: ${B}\n', opts);
    expect(fine.ok && fine.source.value).toEqual({ x: { token: '${A}' }, y: '${B}' });
  });

  it("says that a # inside { } starts a comment, not the parser's complaint lines later", () => {
    const text = 'a: { b: 1 } # a comment after a closed map\nc:\n  d: { e: #x, f: 2 }\n  g: 3\n';
    expect(problems(parseYamlSource('h.yaml', text, opts))).toEqual([
      'h.yaml:3:11 YAML_SYNTAX YAML syntax: # starts a comment here, so the { or [ before it is never closed',
    ]);
    const fine = parseYamlSource('f.yaml', 'a: { b: "#x" } # c\nd: [1, 2] #e\n', opts);
    expect(fine.ok && fine.source.value).toEqual({ a: { b: '#x' }, d: [1, 2] });
  });

  it('never puts the offending line into a message', () => {
    const parsed = parseYamlSource('s.yaml', 'token: "s3cr3t\n  : [\n', opts);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      for (const p of parsed.problems)
        expect(`${p.message} ${p.hint ?? ''}`).not.toContain('s3cr3t');
    }
  });
});
