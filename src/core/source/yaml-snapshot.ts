import {
  Alias,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  Pair,
  Scalar,
  YAMLMap,
  YAMLSeq,
  type Document,
  type Range,
} from 'yaml';
import { YamlLocator } from '../yaml-locator.js';
import type { YamlSource } from './parse-yaml-source.js';

/**
 * What a YamlLocator needs of a parsed file, as plain JSON: every node's range, a scalar's
 * value, style and source text, a mapping's keys, and the line starts. `restoreYamlLocator`
 * rebuilds a locator from it that answers every question exactly as the original did, without
 * parsing the text again (the rule cache, see rule-source-cache.ts).
 */
export type YamlSnapshot = { readonly lines: readonly number[]; readonly root: SnapNode };

/**
 * ['s', start, end, type, value, source (1: the same as value)] | ['t', start, end, type] (a
 * string scalar whose value and source are its text, text[start..end]: most keys and values) | ['m', start, end, [[key, value], …]] |
 * ['q', start, end, [item, …]] | ['a', start, end] | null (nothing a path can stop at).
 */
type SnapNode =
  | readonly [
      's',
      number,
      number,
      string | null,
      string | number | boolean | null,
      string | 1 | null,
    ]
  | readonly ['t', number, number, string | null]
  | readonly ['m', number, number, readonly (readonly [SnapNode, SnapNode])[]]
  | readonly ['q', number, number, readonly SnapNode[]]
  | readonly ['a', number, number]
  | null;

/** A value JSON would not carry unchanged (Infinity, -0, binary, …): such a file is not cached. */
class NotSnapshotable extends Error {}

/** The snapshot of a parsed file, or null when a value in it does not survive JSON. */
export function snapshotYaml(source: YamlSource): YamlSnapshot | null {
  try {
    const root = snapNode(source.doc.contents, source.text);
    return { lines: [...source.lines.lineStarts], root };
  } catch (err) {
    if (err instanceof NotSnapshotable) return null;
    throw err;
  }
}

/** True when `value` is plain JSON that a JSON round trip gives back unchanged. */
export function isPlainJson(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      if (!Number.isFinite(v) || Object.is(v, -0)) return false;
      continue;
    }
    if (Array.isArray(v)) {
      stack.push(...(v as unknown[]));
      continue;
    }
    if (typeof v !== 'object' || Object.getPrototypeOf(v) !== Object.prototype) return false;
    if (Object.hasOwn(v, '__proto__')) return false;
    stack.push(...Object.values(v as Record<string, unknown>));
  }
  return true;
}

function snapNode(node: unknown, text: string): SnapNode {
  if (node === null || node === undefined || typeof node !== 'object') return null;
  const range = (node as { range?: unknown }).range;
  if (!Array.isArray(range)) return null;
  const [start, end] = range as [number, number];
  if (isScalar(node)) {
    const v = node.value;
    if (!(v === null || typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number')) {
      throw new NotSnapshotable();
    }
    if (typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0))) {
      throw new NotSnapshotable();
    }
    const source = typeof node.source === 'string' ? node.source : null;
    const type = node.type === undefined ? null : (TYPE_CODES[node.type] ?? node.type);
    if (typeof v === 'string' && source === v && text.slice(start, end) === v) {
      return ['t', start, end, type];
    }
    return ['s', start, end, type, v, source !== null && source === v ? 1 : source];
  }
  if (isMap(node)) {
    return [
      'm',
      start,
      end,
      node.items.map((p) => [snapNode(p.key, text), snapNode(p.value, text)] as const),
    ];
  }
  if (isSeq(node)) {
    return [
      'q',
      start,
      end,
      node.items.map((item) => (isPair(item) ? null : snapNode(item, text))),
    ];
  }
  if (isAlias(node)) return ['a', start, end];
  return null;
}

/**
 * A locator for `text` from its snapshot. Throws (any error) when the snapshot is malformed: the
 * caller treats that as no snapshot. The text must be the one the snapshot was taken of.
 */
export function restoreYamlLocator(file: string, text: string, snap: YamlSnapshot): YamlLocator {
  const lines = new LineCounter();
  if (!Array.isArray(snap.lines)) throw new TypeError('lines');
  for (const start of snap.lines) {
    if (typeof start !== 'number') throw new TypeError('line start');
    lines.addNewLine(start);
  }
  const doc = { contents: restoreNode(snap.root, text) } as unknown as Document;
  return new YamlLocator(file, text, doc, lines);
}

function restoreNode(snap: SnapNode, text: string): unknown {
  if (snap === null) return null;
  if (!Array.isArray(snap)) throw new TypeError('node');
  const [kind, start, end] = snap;
  if (
    typeof start !== 'number' ||
    typeof end !== 'number' ||
    !(start <= end && end <= text.length)
  ) {
    throw new TypeError('range');
  }
  const range: Range = [start, end, end];
  switch (kind) {
    case 's': {
      const [, , , type, value, source] = snap;
      return scalarOf(value, type, source === 1 ? value : source, range);
    }
    case 't': {
      const value = text.slice(start, end);
      return scalarOf(value, snap[3], value, range);
    }
    case 'm': {
      const map = new YAMLMap();
      for (const [k, v] of snap[3])
        map.items.push(new Pair(restoreNode(k, text), restoreNode(v, text)));
      map.range = range;
      return map;
    }
    case 'q': {
      const seq = new YAMLSeq();
      for (const item of snap[3]) seq.items.push(restoreNode(item, text));
      seq.range = range;
      return seq;
    }
    case 'a': {
      const alias = new Alias('*');
      alias.range = range;
      return alias;
    }
    default:
      throw new TypeError(`node kind ${String(kind)}`);
  }
}

/** A scalar's style in one letter (a snapshot holds tens of thousands). */
const TYPE_CODES: Readonly<Record<string, string>> = {
  PLAIN: 'P',
  QUOTE_DOUBLE: 'D',
  QUOTE_SINGLE: 'S',
  BLOCK_LITERAL: 'L',
  BLOCK_FOLDED: 'F',
};
const TYPES = new Map(Object.entries(TYPE_CODES).map(([type, code]) => [code, type]));

function scalarOf(value: unknown, type: unknown, source: unknown, range: Range): Scalar {
  if (typeof source !== 'string' && source !== null) throw new TypeError('source');
  if (typeof type !== 'string' && type !== null) throw new TypeError('type');
  const scalar = new Scalar(value);
  if (type !== null) scalar.type = (TYPES.get(type) ?? type) as Scalar.Type;
  if (source !== null) scalar.source = source;
  scalar.range = range;
  return scalar;
}
