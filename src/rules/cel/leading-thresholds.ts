import { CelDecimal } from './cel-decimal.js';
import { alternateOf, BAIL, compileClosure, type Closure } from './compile-closure.js';
import type { Node } from './closure-parts.js';
import { isAstNode } from './visit-ast.js';

/**
 * The thresholds an expression's result hinges on: the operands of its top-level `&&` chain that
 * compare a subexpression over `event` alone with a literal (`decimal(event.createArgument.amount)
 * * 2 > decimal("3800")`, `event.offset <= 5`, `date(event.createArgument.due) < date("…")`),
 * after literal folding. As with the leading equalities (leading-equalities.ts), CEL's `&&` is
 * false as soon as one operand is false, errors included: when the subexpression has a value
 * that the comparison rejects, the whole expression is false without evaluating it. The rules of
 * an index that compare one subexpression the same way share its value per event and find the
 * literals it passes by a binary search (rule-index.ts, guards.ts).
 */
export type LeadingThreshold = {
  /** The subexpression's structure as text: rules with the same key compute the same value. */
  readonly key: string;
  /** With the subexpression on the left: `subject op literal`. */
  readonly op: ThresholdOp;
  /** The literal is written on the left (`decimal("10") < x`): `op` is the flipped one. */
  readonly flipped: boolean;
  /**
   * The subexpression as a closure (compile-closure.ts) of the CEL variables: its value where the
   * closures decide it, BAIL otherwise (then nothing is decided: the rule is evaluated).
   */
  readonly subject: Closure;
  readonly literal: ThresholdLiteral;
};

export type ThresholdOp = '<' | '<=' | '>' | '>=';

/** The literal kinds the closures order (closure-parts.ts `order`), one kind per family. */
export type ThresholdLiteral =
  | { readonly type: 'decimal'; readonly value: CelDecimal }
  | { readonly type: 'int'; readonly value: bigint }
  | { readonly type: 'timestamp'; readonly value: Date };

const FLIPPED: Readonly<Record<ThresholdOp, ThresholdOp>> = {
  '<': '>',
  '<=': '>=',
  '>': '<',
  '>=': '<=',
};

const LITERAL_CALLS = new Set(['decimal', 'date', 'timestamp']);

/** The calls of the closures' subset (closure-calls.ts) that give a value to compare. */
const SUBJECT_CALLS = new Set(['decimal', 'date', 'size']);

/** Text without `<` or `>` has no comparison, so no threshold: its AST need not be read. */
export function mayCompare(source: string): boolean {
  return source.includes('<') || source.includes('>');
}

/** The leading thresholds of a checked (folded) AST or its closure form, in source order. */
export function leadingThresholds(ast: unknown): LeadingThreshold[] {
  const out: LeadingThreshold[] = [];
  const conjuncts = (node: unknown, depth: number): void => {
    if (!isAstNode(node) || depth > 200) return;
    const n = node as Node;
    if (n.op === '&&' && Array.isArray(n.args) && alternateOf(n) === undefined) {
      for (const operand of n.args as unknown[]) conjuncts(operand, depth + 1);
      return;
    }
    const threshold = thresholdOf(n);
    if (threshold !== null) out.push(threshold);
  };
  conjuncts(ast, 0);
  return out;
}

function thresholdOf(node: Node): LeadingThreshold | null {
  if (!Object.hasOwn(FLIPPED, node.op) || alternateOf(node) !== undefined) return null;
  if (!Array.isArray(node.args) || node.args.length !== 2) return null;
  const [left, right] = node.args as [unknown, unknown];
  if (!isAstNode(left) || !isAstNode(right)) return null;
  const op = node.op as ThresholdOp;
  for (const [subject, literal, as, flipped] of [
    [left, right, op, false],
    [right, left, FLIPPED[op], true],
  ] as const) {
    const value = literalOf(literal);
    if (value === null) continue;
    const reads = { event: false };
    const key = subjectKey(subject, reads, 0);
    if (key === null || !reads.event) return null;
    return { key, op: as, flipped, subject: lazyClosure(subject), literal: value };
  }
  return null;
}

/**
 * The subexpression's closure, compiled at its first evaluation (an index is built at start-up,
 * before any event). subjectKey takes only what the closures take; anything else gives BAIL.
 */
function lazyClosure(node: Node): Closure {
  let closure: Closure | null | undefined;
  return (values) => {
    closure ??= compileClosure(node, { memoizeConversions: false });
    return closure === null ? BAIL : closure(values);
  };
}

/** A folded literal, a literal value, or `decimal("…")`/`date("…")` of a text literal. */
function literalOf(node: Node): ThresholdLiteral | null {
  const alternate = alternateOf(node);
  const plain = alternate === undefined;
  if (plain && node.op === 'call') {
    const [name, params] = node.args as [unknown, unknown];
    if (typeof name !== 'string' || !LITERAL_CALLS.has(name) || !Array.isArray(params)) {
      return null;
    }
    const [param] = params as unknown[];
    if (params.length !== 1 || !isAstNode(param) || param.op !== 'value') return null;
  } else if ((alternate ?? node).op !== 'value') return null;
  const closure = compileClosure(node, { memoizeConversions: false });
  let value: unknown;
  try {
    value = closure === null ? null : closure({});
  } catch {
    return null;
  }
  if (value instanceof CelDecimal) return { type: 'decimal', value };
  if (typeof value === 'bigint') return { type: 'int', value };
  if (value instanceof Date && !Number.isNaN(value.getTime())) return { type: 'timestamp', value };
  return null;
}

/**
 * The subexpression's structure as text, or null when it reads anything but `event` (outside
 * `event.view`, which differs per interface) or is more than field reads, calls, arithmetic and
 * literals.
 */
function subjectKey(node: Node, reads: { event: boolean }, depth: number): string | null {
  if (depth > 50) return null;
  const alternate = alternateOf(node);
  if (alternate !== undefined) {
    return alternate.op === 'value' ? valueKey(alternate.args) : null;
  }
  const args = node.args;
  switch (node.op) {
    case 'value':
      return valueKey(args);
    case 'id':
      if (args !== 'event') return null;
      reads.event = true;
      return 'event';
    case '.': {
      const [target, field] = args as [unknown, unknown];
      if (!isAstNode(target) || typeof field !== 'string') return null;
      const t = target as Node;
      if (t.op === 'id' && t.args === 'event' && field === 'view') return null;
      const of = subjectKey(t, reads, depth + 1);
      return of === null ? null : `${of}.${JSON.stringify(field)}`;
    }
    case 'call': {
      const [name, params] = args as [unknown, unknown];
      if (typeof name !== 'string' || !SUBJECT_CALLS.has(name) || !Array.isArray(params)) {
        return null;
      }
      const keys = (params as unknown[]).map((p) =>
        isAstNode(p) ? subjectKey(p as Node, reads, depth + 1) : null,
      );
      return keys.includes(null) ? null : `${name}(${keys.join(',')})`;
    }
    case '+':
    case '-':
    case '*': {
      if (!Array.isArray(args) || args.length !== 2) return null;
      const [l, r] = (args as unknown[]).map((p) =>
        isAstNode(p) ? subjectKey(p as Node, reads, depth + 1) : null,
      );
      return l === null || r === null || l === undefined || r === undefined
        ? null
        : `(${l}${node.op}${r})`;
    }
    default:
      return null;
  }
}

function valueKey(value: unknown): string | null {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (value instanceof CelDecimal) return `decimal(${value.toString()})`;
  if (value instanceof Date) return `timestamp(${value.getTime()})`;
  return null;
}
