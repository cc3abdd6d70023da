import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isScalar } from 'yaml';
import { parseYamlSource } from '../../src/core/source/parse-yaml-source.js';
import {
  restoreYamlLocator,
  snapshotYaml,
  type YamlSnapshot,
} from '../../src/core/source/yaml-snapshot.js';
import type { YamlLocator, YamlPath } from '../../src/core/yaml-locator.js';

// A locator restored from a snapshot (the rule cache) answers every question as the one of the
// parsed file: positions of values and keys, offsets inside strings of every style, the scalars.

const STYLES = `version: 1
plain: some text
double: "a \\"quoted\\" \\u00e9 value"
single: 'it''s'
literal: |
  line one
  line two
folded: >-
  folded
  text
number: 12.50
hex: 0x1f
empty:
flow: { a: [1, "two", 'three'], b: null }
list:
  - x: true
    y: ~
  - [nested, list]
anchor: &a { k: v }
alias: *a
multi: "spread
  over lines"
`;

function parsed(text: string): { at: YamlLocator; value: unknown; snap: YamlSnapshot } {
  const r = parseYamlSource('f.yaml', text, { noun: 'file' });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  const snap = snapshotYaml(r.source);
  if (snap === null) throw new Error('no snapshot');
  return { at: r.source.at, value: r.source.value, snap };
}

/** Every path into a plain value, the root included. */
function paths(value: unknown, path: YamlPath = []): YamlPath[] {
  const out: YamlPath[] = [path];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...paths(v, [...path, i])));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...path, k]));
  }
  return out;
}

function answers(at: YamlLocator, path: YamlPath): unknown {
  const node = at.node(path);
  return {
    pos: at.pos(path),
    key: at.pos(path, { key: true }),
    values: [0, 1, 3, 7, 12].map((offset) => at.valuePos(path, offset)),
    scalar: isScalar(node) ? [node.value, node.type, node.source, node.range?.[0]] : null,
    present: node !== undefined,
  };
}

function expectSameAnswers(text: string): void {
  const { at, value, snap } = parsed(text);
  const restored = restoreYamlLocator(
    'f.yaml',
    text,
    JSON.parse(JSON.stringify(snap)) as YamlSnapshot,
  );
  const all = [...paths(value), ['missing'], ['list', 7], ['flow', 'a', '0']];
  for (const path of all)
    expect(answers(restored, path), path.join('/')).toEqual(answers(at, path));
  expect(restored.at(text.length - 3)).toEqual(at.at(text.length - 3));
}

describe('yaml snapshots', () => {
  it('answer as the parsed file for every style of scalar, flow and block, anchors and aliases', () => {
    expectSameAnswers(STYLES);
  });

  it('answer as the parsed file for the rule fixtures and the shipped rules', () => {
    const dir = new URL('../fixtures/rules/valid/', import.meta.url);
    for (const name of readdirSync(dir))
      expectSameAnswers(readFileSync(new URL(name, dir), 'utf8'));
    const shipped = new URL('../../rules/', import.meta.url);
    for (const name of readdirSync(shipped)) {
      expectSameAnswers(readFileSync(new URL(name, shipped), 'utf8'));
    }
  });

  it('are not made of a value JSON would change', () => {
    for (const text of ['n: .inf', 'n: -.inf', 'n: .nan', 'n: -0']) {
      const r = parseYamlSource('f.yaml', text, { noun: 'file' });
      expect(r.ok && snapshotYaml(r.source)).toBe(null);
    }
  });

  it('refuse a snapshot that does not fit the text', () => {
    const { snap } = parsed(STYLES);
    expect(() => restoreYamlLocator('f.yaml', 'short', snap)).toThrow(TypeError);
    expect(() =>
      restoreYamlLocator('f.yaml', STYLES, { lines: [0], root: ['x', 0, 1] as never }),
    ).toThrow(TypeError);
  });
});
