import { CelDecimal } from './cel-decimal.js';
import { isAstNode } from './visit-ast.js';

/**
 * The part of a checked (and folded) cel-js AST the closure compiler reads (compile-closure.ts),
 * as plain data of our own: a node's operator and arguments, the literal a folded call stands
 * for (`alt`, cel-js keeps it in `meta.alternate`), and the text of an arithmetic subtree (`key`,
 * what the rules of one evaluation share its value by). A compile builds the closures from the
 * cel-js AST; a program restored from the compiled rule cache builds the same closures from this
 * form (compile-closure.ts reads both), written as JSON (`encodeClosureForm`) and read back
 * (`decodeClosureForm`) without cel-js.
 *
 * A value the closures never take (a double is JSON, but a uint, bytes or a duration are not) is
 * kept as OPAQUE: the closure compiler rejects it as it rejects the value it stands for.
 */
export type ClosureNode = {
  readonly op: string;
  readonly args: unknown;
  readonly alt?: ClosureNode;
  readonly key?: string;
};

/** Stands for a value outside the subset; `valueClosure` rejects it (it is no literal kind). */
export const OPAQUE: unique symbol = Symbol('ledgerbot.celOpaque');

/** Deeper than this, neither form is made nor read (the closure compiler stops at 200). */
const MAX_DEPTH = 256;

/** Operators whose closures share their value over an evaluation by the subtree's text. */
const KEYED = new Set(['+', '-', '*']);

type CelNode = {
  readonly op: string;
  readonly args: unknown;
  readonly meta?: { readonly alternate?: unknown };
  readonly input?: unknown;
  readonly start?: unknown;
  readonly end?: unknown;
};

/** The closure form of a cel-js AST (see the top); throws RangeError when it is too deep. */
export function closureFormOf(ast: unknown): ClosureNode {
  const node = formOf(ast, 0);
  if (!isAstNode(node)) throw new RangeError('not a CEL expression');
  return node;
}

function formOf(x: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new RangeError('CEL expression nested too deep');
  if (Array.isArray(x)) return x.map((item: unknown) => formOf(item, depth + 1));
  if (!isAstNode(x)) return valueOf(x);
  const node = x as CelNode;
  const out: { op: string; args: unknown; alt?: ClosureNode; key?: string } = {
    op: node.op,
    args: formOf(node.args, depth + 1),
  };
  const alternate = node.meta?.alternate;
  if (alternate !== undefined) out.alt = formOf(alternate, depth + 1) as ClosureNode;
  if (
    KEYED.has(node.op) &&
    typeof node.input === 'string' &&
    typeof node.start === 'number' &&
    typeof node.end === 'number'
  ) {
    out.key = node.input.slice(node.start, node.end);
  }
  return out;
}

function valueOf(x: unknown): unknown {
  switch (typeof x) {
    case 'string':
    case 'boolean':
    case 'bigint':
      return x;
    case 'number':
      return x;
    case 'object':
      if (x === null || x instanceof CelDecimal) return x;
      if (x instanceof Date && !Number.isNaN(x.getTime())) return x;
      return OPAQUE;
    default:
      return OPAQUE;
  }
}

/**
 * The form as JSON data: nodes as `{op, args, alt?, key?}` objects, texts, booleans and null as
 * themselves, and tagged one-key objects for the rest: `{"i": "12"}` an int, `{"n": 1.5}` a
 * double, `{"d": "12.5"}` a decimal, `{"t": 1767225600000}` a timestamp, `{"x": 0}` OPAQUE.
 */
export function encodeClosureForm(node: ClosureNode): unknown {
  return encode(node, 0);
}

function encode(x: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new RangeError('CEL expression nested too deep');
  if (Array.isArray(x)) return x.map((item: unknown) => encode(item, depth + 1));
  if (isAstNode(x)) {
    const node = x as ClosureNode;
    const out: Record<string, unknown> = { op: node.op, args: encode(node.args, depth + 1) };
    if (node.alt !== undefined) out.alt = encode(node.alt, depth + 1);
    if (node.key !== undefined) out.key = node.key;
    return out;
  }
  if (typeof x === 'string' || typeof x === 'boolean' || x === null) return x;
  if (typeof x === 'bigint') return { i: x.toString() };
  if (typeof x === 'number') return Number.isFinite(x) && !Object.is(x, -0) ? { n: x } : { x: 0 };
  if (x instanceof CelDecimal) return { d: x.toString() };
  if (x instanceof Date) return { t: x.getTime() };
  return { x: 0 };
}

/** Why `decodeClosureForm` refused its input. */
export class MalformedClosureForm extends Error {}

/** The form `encodeClosureForm` wrote; throws MalformedClosureForm for anything else. */
export function decodeClosureForm(json: unknown): ClosureNode {
  const node = decode(json, 0);
  if (!isAstNode(node)) throw new MalformedClosureForm('not a CEL expression');
  return node;
}

function decode(x: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new MalformedClosureForm('nested too deep');
  if (typeof x === 'string' || typeof x === 'boolean' || x === null) return x;
  if (Array.isArray(x)) return x.map((item: unknown) => decode(item, depth + 1));
  if (typeof x !== 'object') throw new MalformedClosureForm(`a ${typeof x} in an expression`);
  const o = x as Record<string, unknown>;
  if (typeof o.op === 'string') {
    const out: { op: string; args: unknown; alt?: ClosureNode; key?: string } = {
      op: o.op,
      args: decode(o.args, depth + 1),
    };
    if (o.alt !== undefined) {
      const alt = decode(o.alt, depth + 1);
      if (!isAstNode(alt)) throw new MalformedClosureForm('a folded literal that is no node');
      out.alt = alt;
    }
    if (o.key !== undefined) {
      if (typeof o.key !== 'string') throw new MalformedClosureForm('a key that is no text');
      out.key = o.key;
    }
    return out;
  }
  const keys = Object.keys(o);
  if (keys.length !== 1) throw new MalformedClosureForm('an unknown value');
  if (typeof o.i === 'string' && /^-?\d{1,40}$/.test(o.i)) return BigInt(o.i);
  if (typeof o.n === 'number') return o.n;
  if (typeof o.d === 'string') {
    const d = CelDecimal.parse(o.d);
    if (d !== null) return d;
  }
  if (typeof o.t === 'number' && Number.isFinite(o.t)) return new Date(o.t);
  if (o.x === 0) return OPAQUE;
  throw new MalformedClosureForm('an unknown value');
}
