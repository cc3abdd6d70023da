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
 * Every field path the expression reads, through plain field access (`a.b`), indexing with a
 * text literal (`a["b"]`, a field) or anything else (`a[0]`, `a[k]`: EVERY_ITEM), comprehension
 * variables (`items.all(i, i.note == null)` reads `items` → EVERY_ITEM → `note`) and
 * `cel.bind`. A path through anything else (a function's result, a ternary) is not followed.
 * Prefixes of a path are reported too; callers merge them.
 */
export function readPaths(ast: unknown): ReadPath[] {
  return readPathsAndNumberOperands(ast).reads;
}

/** readPaths, and the paths compared or computed with a number literal, in one walk. */
export function readPathsAndNumberOperands(ast: unknown): {
  reads: ReadPath[];
  numberOperands: NumberOperand[];
} {
  const reads: ReadPath[] = [];
  const numberOperands: NumberOperand[] = [];
  walk(ast, new Map(), { reads, numberOperands }, 0);
  return { reads, numberOperands };
}

const NUMBER_OPERATORS = new Set(['<', '<=', '>', '>=', '==', '!=', '+', '-', '*', '/', '%']);

function numberLiteral(x: unknown): 'int' | 'double' | null {
  if (!isNode(x) || x.op !== 'value') return null;
  return typeof x.args === 'bigint' ? 'int' : typeof x.args === 'number' ? 'double' : null;
}

type Found = { readonly reads: ReadPath[]; readonly numberOperands: NumberOperand[] };

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
