/**
 * The field paths a CEL expression reads: `event.createArgument.note` reads
 * `event` → `createArgument` → `note`. Found once, at compile time, from the parsed AST, so that
 * evaluation can make fields the participant left out read `null` (see field-reads.ts) and
 * `validate` can check field names against the templates it knows.
 */

/** A path segment that stands for every item of a list (or every value of a map). */
export const EVERY_ITEM = '[]';

export type ReadSegment = {
  /** A field name, or EVERY_ITEM for `list[i]`, `map[key]` and comprehension variables. */
  readonly name: string;
  /** Where the field name starts in the expression text (0-based). */
  readonly offset: number;
};

export type ReadPath = {
  /** The variable the path starts from (`event`, `contract`, ...). */
  readonly variable: string;
  readonly segments: readonly ReadSegment[];
};

/**
 * A path used as an operand of an arithmetic or comparison operator whose other operand is a
 * number literal (`event.createArgument.amount >= 1000`): wrong when the field is a Daml Numeric
 * or Int64, which arrive as text (see unknown-field-reads.ts).
 */
export type NumberOperand = {
  readonly path: ReadPath;
  readonly op: string;
  readonly literal: 'int' | 'double';
};

/** The type of a CEL value where it is known without the data: literals, function results, … */
export type StaticType =
  | 'int'
  | 'uint'
  | 'double'
  | 'string'
  | 'bool'
  | 'null'
  | 'bytes'
  | 'Decimal'
  | 'timestamp'
  | 'duration'
  | 'list'
  | 'map';

/** One side of an operator: a field path, a value of a known type, or neither. */
export type Operand =
  | { readonly kind: 'path'; readonly path: ReadPath }
  | { readonly kind: 'static'; readonly type: StaticType; readonly text?: string }
  | { readonly kind: 'unknown' };

/** A comparison or arithmetic operator with at least one side a field path. */
export type Comparison = {
  readonly op: string;
  readonly left: Operand;
  readonly right: Operand;
};

/**
 * A test that makes reading below a value safe: `x != null` (or any comparison of `x` with
 * null) for an Optional `x`, and any comparison of `x.tag` for a variant `x` (`kind: 'tag'`).
 */
export type Guard = { readonly kind: 'null' | 'tag'; readonly path: ReadPath };

/** What the AST walk finds; see readPathsAndNumberOperands. */
export type ExpressionFacts = {
  readonly reads: ReadPath[];
  readonly numberOperands: NumberOperand[];
  readonly comparisons: Comparison[];
  readonly guards: Guard[];
  /** The type of the whole expression, where it is known. */
  readonly result: Operand;
};

type AstNode = { readonly op: string; readonly args: unknown; readonly pos?: number };

function isNode(x: unknown): x is AstNode {
  return typeof x === 'object' && x !== null && typeof (x as AstNode).op === 'string';
}

/** What a name in scope stands for: a path into a variable, or a value we cannot follow. */
type Binding = ReadPath | null;
type Scope = ReadonlyMap<string, Binding>;

const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
const MAX_DEPTH = 500;

/**
 * In one walk of the AST: every field path the expression reads, through plain field access
 * (`a.b`), indexing with a text literal (`a["b"]`, a field) or anything else (`a[0]`, `a[k]`:
 * EVERY_ITEM), comprehension variables (`items.all(i, i.note == null)` reads `items` →
 * EVERY_ITEM → `note`) and `cel.bind` (a path through anything else, a function's result or a
 * ternary, is not followed; prefixes of a path are reported too, callers merge them); the paths
 * compared or computed with a number literal, every comparison or arithmetic with a path on one
 * side, the null and tag tests (guards), and the expression's own type where known.
 */
export function readPathsAndNumberOperands(ast: unknown): ExpressionFacts {
  const found: Found = { reads: [], numberOperands: [], comparisons: [], guards: [] };
  walk(ast, new Map(), found, 0);
  return { ...found, result: isNode(ast) ? operandOf(ast, new Map(), 0) : UNKNOWN };
}

const NUMBER_OPERATORS = new Set(['<', '<=', '>', '>=', '==', '!=', '+', '-', '*', '/', '%']);
const UNKNOWN: Operand = { kind: 'unknown' };

/** The types of what the functions ledgerbot's CEL has return, by name. */
const CALL_TYPES: Readonly<Record<string, StaticType>> = {
  decimal: 'Decimal',
  sum: 'Decimal',
  date: 'timestamp',
  damlDate: 'string',
  timestamp: 'timestamp',
  duration: 'duration',
  int: 'int',
  uint: 'uint',
  double: 'double',
  string: 'string',
  bool: 'bool',
  bytes: 'bytes',
  size: 'int',
  has: 'bool',
};

/** Variables whose type is known: `now`, `today`. */
const VARIABLE_TYPES: Readonly<Record<string, StaticType>> = {
  now: 'timestamp',
  today: 'timestamp',
};

const BOOLEAN_OPERATORS = new Set(['!', '&&', '||', '<', '<=', '>', '>=', '==', '!=', 'in']);

/** `node`'s type, as far as it is known without the data: a path, a static type, or unknown. */
function operandOf(node: AstNode, scope: Scope, depth: number): Operand {
  if (depth > MAX_DEPTH) return UNKNOWN;
  const staticType = (type: StaticType): Operand => ({ kind: 'static', type });
  switch (node.op) {
    case 'value': {
      const v = node.args;
      if (typeof v === 'bigint') return staticType('int');
      if (typeof v === 'number') return staticType('double');
      // The text too: a literal compared with a Party that cannot be one (`== "payer"`).
      if (typeof v === 'string') return { kind: 'static', type: 'string', text: v };
      if (typeof v === 'boolean') return staticType('bool');
      if (v === null) return staticType('null');
      if (v instanceof Uint8Array) return staticType('bytes');
      return (v as { constructor?: { name?: string } } | undefined)?.constructor?.name ===
        'UnsignedInt'
        ? staticType('uint')
        : UNKNOWN;
    }
    case 'list':
      return staticType('list');
    case 'map':
      return staticType('map');
    case 'id': {
      const known = typeof node.args === 'string' ? VARIABLE_TYPES[node.args] : undefined;
      if (known !== undefined && !scope.has(node.args as string)) return staticType(known);
      break;
    }
    case 'call': {
      const name = Array.isArray(node.args) ? (node.args as unknown[])[0] : undefined;
      const known = typeof name === 'string' ? CALL_TYPES[name] : undefined;
      return known === undefined ? UNKNOWN : staticType(known);
    }
    case '?:': {
      const [, a, b] = node.args as [unknown, unknown, unknown];
      if (!isNode(a) || !isNode(b)) return UNKNOWN;
      const x = operandOf(a, scope, depth + 1);
      const y = operandOf(b, scope, depth + 1);
      return x.kind === 'static' && y.kind === 'static' && x.type === y.type ? x : UNKNOWN;
    }
    default:
      if (BOOLEAN_OPERATORS.has(node.op)) return staticType('bool');
  }
  if (node.op === '.' || node.op === '[]' || node.op === 'id') {
    const path = pathOf(node, scope);
    return path === null || path.segments.length === 0 ? UNKNOWN : { kind: 'path', path };
  }
  return UNKNOWN;
}

function numberLiteral(x: unknown): 'int' | 'double' | null {
  if (!isNode(x) || x.op !== 'value') return null;
  return typeof x.args === 'bigint' ? 'int' : typeof x.args === 'number' ? 'double' : null;
}

type Found = Omit<ExpressionFacts, 'result'>;

function pathOf(node: AstNode, scope: Scope): Binding {
  if (node.op === 'id' && typeof node.args === 'string') {
    return scope.has(node.args)
      ? (scope.get(node.args) ?? null)
      : { variable: node.args, segments: [] };
  }
  if ((node.op !== '.' && node.op !== '[]') || !Array.isArray(node.args)) return null;
  const [target, key] = node.args as [unknown, unknown];
  if (!isNode(target)) return null;
  const base = pathOf(target, scope);
  if (base === null) return null;
  const offset = node.pos ?? 0;
  let name: string;
  if (node.op === '.') {
    if (typeof key !== 'string') return null;
    name = key;
  } else {
    name =
      isNode(key) && key.op === 'value' && typeof key.args === 'string' ? key.args : EVERY_ITEM;
  }
  return { variable: base.variable, segments: [...base.segments, { name, offset }] };
}

function walk(node: unknown, scope: Scope, out: Found, depth: number): void {
  if (depth > MAX_DEPTH) return;
  if (Array.isArray(node)) {
    for (const child of node) walk(child, scope, out, depth + 1);
    return;
  }
  if (!isNode(node)) return;
  if (node.op === '.' || node.op === '[]') {
    const path = pathOf(node, scope);
    if (path !== null && path.segments.length > 0) out.reads.push(path);
  }
  if (NUMBER_OPERATORS.has(node.op) && Array.isArray(node.args) && node.args.length === 2) {
    const sides = node.args as unknown[];
    collectComparison(node.op, sides, scope, out, depth);
    sides.forEach((side, i) => {
      const literal = numberLiteral(sides[1 - i]);
      if (literal === null || !isNode(side)) return;
      const path = pathOf(side, scope);
      if (path !== null && path.segments.length > 0) {
        out.numberOperands.push({ path, op: node.op, literal });
      }
    });
  }
  if (node.op === 'rcall' && Array.isArray(node.args)) {
    const [name, receiver, params] = node.args as [unknown, unknown, unknown];
    const bound = Array.isArray(params) ? bindingOf(name, receiver, params, scope) : undefined;
    if (bound !== undefined && Array.isArray(params)) {
      walk(receiver, scope, out, depth + 1);
      const inner = new Map(scope);
      inner.set(bound.name, bound.binding);
      // `cel.bind(x, value, body)`: `value` is read in the outer scope, `body` with `x`.
      if (name === 'bind') walk(params[1], scope, out, depth + 1);
      walk(params.slice(name === 'bind' ? 2 : 1), inner, out, depth + 1);
      return;
    }
  }
  walk(node.args, scope, out, depth + 1);
}

/** The variable a comprehension or `cel.bind` introduces, and what it stands for. */
function bindingOf(
  name: unknown,
  receiver: unknown,
  params: readonly unknown[],
  scope: Scope,
): { name: string; binding: Binding } | undefined {
  const variable = params[0];
  if (!isNode(variable) || variable.op !== 'id' || typeof variable.args !== 'string') {
    return undefined;
  }
  if (typeof name === 'string' && COMPREHENSIONS.has(name) && isNode(receiver)) {
    const list = pathOf(receiver, scope);
    return {
      name: variable.args,
      binding:
        list === null
          ? null
          : {
              variable: list.variable,
              segments: [...list.segments, { name: EVERY_ITEM, offset: variable.pos ?? 0 }],
            },
    };
  }
  if (name === 'bind' && isNode(receiver) && receiver.op === 'id' && receiver.args === 'cel') {
    const value = params[1];
    return { name: variable.args, binding: isNode(value) ? pathOf(value, scope) : null };
  }
  return undefined;
}

/** The comparison (with its operand types) and the guard an operator with two sides makes. */
function collectComparison(
  op: string,
  sides: readonly unknown[],
  scope: Scope,
  out: Found,
  depth: number,
): void {
  const [a, b] = sides;
  if (!isNode(a) || !isNode(b)) return;
  const left = operandOf(a, scope, depth + 1);
  const right = operandOf(b, scope, depth + 1);
  if (left.kind !== 'path' && right.kind !== 'path') return;
  out.comparisons.push({ op, left, right });
  if (op !== '==' && op !== '!=') return;
  for (const [side, other] of [
    [left, right],
    [right, left],
  ] as const) {
    if (side.kind !== 'path') continue;
    if (other.kind === 'static' && other.type === 'null') {
      out.guards.push({ kind: 'null', path: side.path });
    }
    const last = side.path.segments[side.path.segments.length - 1];
    if (last?.name === 'tag') {
      out.guards.push({
        kind: 'tag',
        path: { variable: side.path.variable, segments: side.path.segments.slice(0, -1) },
      });
    }
  }
}
