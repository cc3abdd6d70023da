import { CelDecimal } from './cel-decimal.js';
import type { ClosureNode } from './closure-form.js';
import { isAstNode } from './visit-ast.js';

/**
 * The pieces the closures of a CEL expression are made of (see compile-closure.ts): the BAIL
 * answer, the AST node shape, and the subset's value semantics (equality, ordering, decimal
 * arithmetic), which give BAIL wherever cel-js could answer otherwise.
 */

/** "Not decided here: evaluate with cel-js." */
export const BAIL: unique symbol = Symbol('ledgerbot.celBail');

export type Closure = (values: Readonly<Record<string | symbol, unknown>>) => unknown;

/** A node of an expression's closure form (closure-form.ts). */
export type Node = ClosureNode;

/** Why a node has no closure; compileClosure catches it and gives null. */
export class Unsupported extends Error {}

export function unsupported(): never {
  throw new Unsupported();
}

export type ClosureOptions = {
  /** `decimal(x)`/`date(x)` of text read the evaluation's ConversionMemo (see literal-calls.ts). */
  readonly memoizeConversions: boolean;
};

export function isPlainObject(value: unknown): value is Readonly<Record<string, unknown>> {
  if (typeof value !== 'object' || value === null) return false;
  // The objects cel-js reads as maps by their own properties (operators.js, fieldAccess).
  const ctor: unknown = (value as { constructor?: unknown }).constructor;
  return ctor === Object || ctor === undefined;
}

/** `a` compared with `b` (-1, 0, 1) when the subset orders them, else null. */
export function order(a: unknown, b: unknown): number | null {
  if (a instanceof CelDecimal) {
    if (b instanceof CelDecimal) return a.compare(b);
    if (typeof b === 'bigint') return a.compare(CelDecimal.fromBigInt(b));
    return null;
  }
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (a instanceof Date && b instanceof Date) {
    const x = a.getTime();
    const y = b.getTime();
    return Number.isNaN(x) || Number.isNaN(y) ? null : x < y ? -1 : x > y ? 1 : 0;
  }
  return null;
}

/** `a == b` when the subset decides it, else BAIL. */
export function equals(a: unknown, b: unknown): boolean | typeof BAIL {
  const ta = typeof a;
  const tb = typeof b;
  if (ta === 'string' || ta === 'boolean' || ta === 'bigint') {
    if (tb === ta || b === null) return a === b;
    return BAIL;
  }
  if (a === null) {
    if (b === null) return true;
    return tb === 'string' || tb === 'boolean' || tb === 'bigint' ? false : BAIL;
  }
  if (a instanceof CelDecimal && b instanceof CelDecimal) return a.compare(b) === 0;
  return BAIL;
}

export const ORDERINGS: Readonly<Record<string, (c: number) => boolean>> = {
  '<': (c) => c < 0,
  '<=': (c) => c <= 0,
  '>': (c) => c > 0,
  '>=': (c) => c >= 0,
};

export const ARITHMETIC: Readonly<Record<string, (a: CelDecimal, b: CelDecimal) => CelDecimal>> = {
  '+': (a, b) => a.plus(b),
  '-': (a, b) => a.minus(b),
  '*': (a, b) => a.times(b),
};

export function asDecimal(x: unknown): CelDecimal | null {
  if (x instanceof CelDecimal) return x;
  return null;
}

export function pair(node: Node): [Node, Node] {
  const args = node.args;
  if (!Array.isArray(args) || args.length !== 2 || !isAstNode(args[0]) || !isAstNode(args[1])) {
    unsupported();
  }
  return [args[0], args[1]];
}
