import { MalformedClosureForm } from './closure-form.js';
import type { LeadingEquality } from './leading-equalities.js';
import type { Comparison, Guard, NumberOperand, Operand, ReadPath } from './read-paths.js';

/**
 * A compiled CEL program as JSON data (the compiled rule cache keeps one per distinct text): what
 * it was compiled from, the facts its AST gave (read-paths.ts, leading-equalities.ts) and the
 * closure form of its AST (closure-form.ts, encoded; null when the closures do not take it).
 * `CelEnvironment.restore` makes a program of it without parsing or checking; cel-js compiles
 * the text only when the program first needs it.
 */
export type StoredProgram = {
  readonly source: string;
  readonly variables: readonly string[];
  readonly maxComprehensionDepth: number | null;
  readonly reads: readonly ReadPath[];
  readonly numberOperands: readonly NumberOperand[];
  readonly comparisons: readonly Comparison[];
  readonly guards: readonly Guard[];
  readonly equalities: readonly LeadingEquality[];
  readonly result: Operand;
  readonly closure: unknown;
};

const STATIC_TYPES = new Set([
  'int',
  'uint',
  'double',
  'string',
  'bool',
  'null',
  'bytes',
  'Decimal',
  'timestamp',
  'duration',
  'list',
  'map',
]);

function fail(what: string): never {
  throw new MalformedClosureForm(`a stored CEL program with ${what}`);
}

function isRecordValue(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function list(x: unknown, what: string): unknown[] {
  if (!Array.isArray(x)) fail(`no list of ${what}`);
  return x;
}

function texts(x: unknown, what: string): string[] {
  const xs = list(x, what);
  if (!xs.every((s) => typeof s === 'string')) fail(`${what} that are not texts`);
  return xs;
}

function readPath(x: unknown): ReadPath {
  if (!isRecordValue(x) || typeof x.variable !== 'string') fail('a malformed path');
  for (const s of list(x.segments, 'segments')) {
    if (!isRecordValue(s) || typeof s.name !== 'string' || typeof s.offset !== 'number') {
      fail('a malformed path segment');
    }
  }
  return x as unknown as ReadPath;
}

function operand(x: unknown): Operand {
  if (!isRecordValue(x)) fail('a malformed operand');
  if (x.kind === 'path') readPath(x.path);
  else if (x.kind === 'static') {
    if (typeof x.type !== 'string' || !STATIC_TYPES.has(x.type)) fail('an unknown type');
  } else if (x.kind !== 'unknown') fail('a malformed operand');
  return x as Operand;
}

function equality(x: unknown): LeadingEquality {
  if (!isRecordValue(x) || typeof x.variable !== 'string') fail('a malformed equality');
  texts(x.fields, 'fields');
  const e = x.expected;
  if (!isRecordValue(e)) fail('a malformed equality');
  const ok =
    (e.kind === 'text' && (texts(e.values, 'values'), true)) ||
    (e.kind === 'party' && typeof e.alias === 'string') ||
    ((e.kind === 'startsWith' ||
      e.kind === 'endsWith' ||
      e.kind === 'contains' ||
      e.kind === 'date') &&
      typeof e.text === 'string');
  if (!ok) fail('a malformed equality');
  return x as unknown as LeadingEquality;
}

/** `json` as a StoredProgram; throws MalformedClosureForm when it is not one. */
export function checkStoredProgram(json: unknown): StoredProgram {
  if (!isRecordValue(json) || typeof json.source !== 'string') fail('no text');
  texts(json.variables, 'variables');
  const max = json.maxComprehensionDepth;
  if (max !== null && typeof max !== 'number') fail('a malformed depth limit');
  list(json.reads, 'reads').forEach(readPath);
  for (const n of list(json.numberOperands, 'number operands')) {
    if (
      !isRecordValue(n) ||
      typeof n.op !== 'string' ||
      (n.literal !== 'int' && n.literal !== 'double')
    ) {
      fail('a malformed number operand');
    }
    readPath(n.path);
  }
  for (const c of list(json.comparisons, 'comparisons')) {
    if (!isRecordValue(c) || typeof c.op !== 'string') fail('a malformed comparison');
    operand(c.left);
    operand(c.right);
  }
  for (const g of list(json.guards, 'guards')) {
    if (!isRecordValue(g) || (g.kind !== 'null' && g.kind !== 'tag')) fail('a malformed guard');
    readPath(g.path);
  }
  list(json.equalities, 'equalities').forEach(equality);
  operand(json.result);
  return json as unknown as StoredProgram;
}
