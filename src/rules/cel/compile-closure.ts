import {
  ARITHMETIC,
  asDecimal,
  BAIL,
  equals,
  isPlainObject,
  order,
  ORDERINGS,
  pair,
  Unsupported,
  unsupported,
  type Closure,
  type ClosureOptions,
  type Node,
} from './closure-parts.js';
import { callClosure, inClosure, methodClosure, valueClosure } from './closure-calls.js';
import { CelDecimal } from './cel-decimal.js';
import type { ConversionMemo } from './conversion-memo.js';
import { MEMO_KEY } from './literal-calls.js';
import { isAstNode } from './visit-ast.js';

export { BAIL, type Closure, type ClosureOptions } from './closure-parts.js';

/**
 * A checked CEL expression as a tree of JavaScript closures, built once from its AST (no source
 * text is generated or run): the common subset of rule conditions (field reads, `==`, `!=`,
 * `<`…`>=` on text, ints, decimals and timestamps, `in [...]`, `startsWith`, `endsWith`,
 * `contains`, `matches`, `size`, `has`, `!`, `&&`, `||`, `?:`, `decimal()`, `date()`).
 *
 * It takes the happy path only: whenever a value is not what the subset handles (a missing field,
 * null where text is compared with text, a double, text that is not a decimal, anything that
 * would be a CEL error), it gives BAIL, and the caller evaluates the expression with cel-js as
 * written. Evaluation is pure, so running it again gives cel-js's own result and error, and the
 * closure never has to reproduce an error. BAIL is a symbol: every type test rejects it, so it
 * passes up through the operators without a check of its own.
 */

/**
 * The closure of a checked (and, when folding is on, folded) expression, given as its cel-js AST
 * or as its closure form (closure-form.ts: the same nodes, as plain data), or null when it uses
 * something outside the subset: then cel-js evaluates it every time.
 */
export function compileClosure(ast: unknown, options: ClosureOptions): Closure | null {
  try {
    return closureOf(ast, options, 0);
  } catch (error) {
    if (error instanceof Unsupported) return null;
    throw error;
  }
}

function closureOf(raw: unknown, options: ClosureOptions, depth: number): Closure {
  if (!isAstNode(raw) || depth > 200) unsupported();
  const node = raw as Node;
  const alternate = alternateOf(node);
  if (alternate !== undefined) {
    // A folded literal (literal-calls.ts) or a constant; anything else (macros) is not ours.
    if (alternate.op !== 'value') unsupported();
    return valueClosure(alternate.args);
  }
  const next = depth + 1;
  const sub = (n: Node): Closure => closureOf(n, options, next);
  switch (node.op) {
    case 'value':
      return valueClosure(node.args);
    case 'id': {
      const name = node.args;
      if (typeof name !== 'string') unsupported();
      return (values) => {
        const v = values[name];
        return v === undefined ? BAIL : v;
      };
    }
    case '.': {
      const [target, field] = node.args as [unknown, unknown];
      if (typeof field !== 'string') unsupported();
      const path = pathOf(node);
      if (path !== null) return pathClosure(path.variable, path.fields);
      const of = sub(target as Node);
      return (values) => {
        const at = of(values);
        if (!isPlainObject(at) || !Object.hasOwn(at, field)) return BAIL;
        const v = at[field];
        return v === undefined ? BAIL : v;
      };
    }
    case '[]': {
      const [l, r] = pair(node).map(sub) as [Closure, Closure];
      return (values) => {
        const at = l(values);
        const key = r(values);
        if (Array.isArray(at)) {
          if (typeof key !== 'bigint' || key < 0n || key >= BigInt(at.length)) return BAIL;
          const v: unknown = at[Number(key)];
          return v === undefined ? BAIL : v;
        }
        if (typeof key !== 'string' || !isPlainObject(at) || !Object.hasOwn(at, key)) return BAIL;
        const v = at[key];
        return v === undefined ? BAIL : v;
      };
    }
    case '&&':
    case '||': {
      const [l, r] = pair(node).map(sub) as [Closure, Closure];
      // CEL: false && x is false (and true || x true) whatever x gives, errors included.
      const decisive = node.op === '||';
      return (values) => {
        const a = l(values);
        if (a === decisive) return decisive;
        if (a !== !decisive) return BAIL;
        const b = r(values);
        return typeof b === 'boolean' ? b : BAIL;
      };
    }
    case '!_': {
      const of = sub(node.args as Node);
      return (values) => {
        const v = of(values);
        return typeof v === 'boolean' ? !v : BAIL;
      };
    }
    case '?:': {
      const args = node.args;
      if (!Array.isArray(args) || args.length !== 3) unsupported();
      const [c, t, f] = (args as Node[]).map(sub) as [Closure, Closure, Closure];
      return (values) => {
        const v = c(values);
        return v === true ? t(values) : v === false ? f(values) : BAIL;
      };
    }
    case '==':
    case '!=': {
      const [l, r] = pair(node).map(sub) as [Closure, Closure];
      const negate = node.op === '!=';
      return (values) => {
        const v = equals(l(values), r(values));
        return v === BAIL ? BAIL : v !== negate;
      };
    }
    case '<':
    case '<=':
    case '>':
    case '>=': {
      const [l, r] = pair(node).map(sub) as [Closure, Closure];
      const test = ORDERINGS[node.op]!;
      return (values) => {
        const c = order(l(values), r(values));
        return c === null ? BAIL : test(c);
      };
    }
    case '+':
    case '-':
    case '*': {
      const [l, r] = pair(node).map(sub) as [Closure, Closure];
      const fn = ARITHMETIC[node.op]!;
      const compute: Closure = (values) => {
        const a = l(values);
        const b = r(values);
        // Decimal arithmetic only, mixed with ints on either side (cel-environment.ts); int
        // arithmetic (overflow) and text concatenation are left to cel-js.
        const x =
          asDecimal(a) ??
          (typeof a === 'bigint' && b instanceof CelDecimal ? CelDecimal.fromBigInt(a) : null);
        const y =
          asDecimal(b) ??
          (typeof b === 'bigint' && a instanceof CelDecimal ? CelDecimal.fromBigInt(b) : null);
        return x === null || y === null ? BAIL : fn(x, y);
      };
      return options.memoizeConversions ? sharedOverEvent(node, compute) : compute;
    }
    case 'in':
      return inClosure(node, sub);
    case 'call':
      return callClosure(node, sub, options);
    case 'rcall':
      return methodClosure(node, sub);
    default:
      return unsupported();
  }
}

/** The literal a folded node stands for: `alt` in the closure form, `meta.alternate` in cel-js. */
export function alternateOf(node: Node): Node | undefined {
  return node.alt ?? (node as { readonly meta?: { readonly alternate?: Node } }).meta?.alternate;
}

/** A subtree's text: `key` in the closure form, its span of the input in cel-js. */
function keyOf(node: Node): string | undefined {
  if (node.key !== undefined) return node.key;
  const at = node as { readonly input?: unknown; readonly start?: unknown; readonly end?: unknown };
  return typeof at.input === 'string' && typeof at.start === 'number' && typeof at.end === 'number'
    ? at.input.slice(at.start, at.end)
    : undefined;
}

/**
 * `variable.f.g…` (ids and field selections only, none folded): what most conditions read. Null
 * for anything else.
 */
function pathOf(node: Node): { variable: string; fields: string[] } | null {
  const fields: string[] = [];
  let at: Node = node;
  for (let depth = 0; depth <= 200; depth++) {
    if (alternateOf(at) !== undefined) return null;
    if (at.op === 'id') {
      return typeof at.args === 'string' ? { variable: at.args, fields: fields.reverse() } : null;
    }
    if (at.op !== '.') return null;
    const [target, field] = at.args as [unknown, unknown];
    if (typeof field !== 'string' || !isAstNode(target)) return null;
    fields.push(field);
    at = target;
  }
  return null;
}

/**
 * A field path read in one closure instead of one per selection (the per-event cost of a
 * condition is mostly its reads): the same checks at each step as the `id` and `.` closures.
 */
function pathClosure(variable: string, fields: readonly string[]): Closure {
  if (fields.length === 2) {
    const [f, g] = fields as [string, string];
    return (values) => {
      const v = values[variable];
      if (!isPlainObject(v) || !Object.hasOwn(v, f)) return BAIL;
      const w = v[f];
      if (!isPlainObject(w) || !Object.hasOwn(w, g)) return BAIL;
      const x = w[g];
      return x === undefined ? BAIL : x;
    };
  }
  return (values) => {
    let at = values[variable];
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i]!;
      if (!isPlainObject(at) || !Object.hasOwn(at, field)) return BAIL;
      at = at[field];
    }
    return at === undefined ? BAIL : at;
  };
}

/** The variables whose values are the same for every rule of one evaluation but `event`. */
const SHARED_VARIABLES = new Set(['event', 'parties']);

/** The names of the variables a subtree reads. */
function variablesOf(node: unknown, into: Set<string>, depth = 0): Set<string> {
  if (depth > 200) into.add('?');
  else if (Array.isArray(node)) for (const x of node) variablesOf(x, into, depth + 1);
  else if (isAstNode(node)) {
    if (node.op === 'id' && typeof node.args === 'string') into.add(node.args);
    else variablesOf(node.args, into, depth + 1);
  }
  return into;
}

/**
 * `compute`, its value shared by the rules of one evaluation through its ConversionMemo, when
 * the subtree reads `event` and nothing else a rule changes (`rule`): the rules of a template
 * that compute `decimal(event.amount) * 2` compute it once per event. Keyed by the subtree's text.
 */
function sharedOverEvent(node: Node, compute: Closure): Closure {
  const reads = variablesOf(node, new Set());
  const key = keyOf(node);
  if (
    !reads.has('event') ||
    [...reads].some((v) => !SHARED_VARIABLES.has(v)) ||
    key === undefined
  ) {
    return compute;
  }
  return (values) => {
    const memo = values[MEMO_KEY] as ConversionMemo | undefined;
    if (memo === undefined) return compute(values);
    const event = values.event;
    const known = memo.shared(key, event);
    if (known !== undefined) return known;
    const value = compute(values);
    if (value !== BAIL) memo.share(key, event, value);
    return value;
  };
}
