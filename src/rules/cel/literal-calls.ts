import { EvaluationError, type ASTNode } from '@marcbachmann/cel-js';
import { CelCompileError } from './cel-compile-error.js';
import type { ConversionMemo } from './conversion-memo.js';
import { isAstNode, visitAst } from './visit-ast.js';

/**
 * Compile-time rewrites of conversion calls, on the parsed AST (cel-js 8 internals: an AST node's
 * `meta` holds its `check`/`evaluate`, and `setMeta('alternate', …)` makes a node stand for
 * another, as cel-js does for constants).
 *
 * - Folding: `decimal("12.5")`, `date("2025-01-31")`, `timestamp("…Z")` and `duration("…")` with
 *   a string literal argument become that value once, instead of being parsed at every
 *   evaluation. A literal the function rejects is a compile error at the literal.
 * - Memo: `decimal(x)` and `date(x)` with any other argument look the argument's text up in the
 *   evaluation's ConversionMemo (passed in the variables under MEMO_KEY), so the rules that
 *   convert the same event field convert it once per event. Without a memo, and for arguments
 *   that are not text (ints, doubles, timestamps, decimals), the call runs as written.
 */

/** The variables key of the evaluation's ConversionMemo: a symbol, so no CEL name can reach it. */
export const MEMO_KEY: unique symbol = Symbol('ledgerbot.conversionMemo');

/** Functions whose string-literal calls are folded. */
export const FOLDED_FUNCTIONS = ['decimal', 'date', 'timestamp', 'duration'] as const;
export type FoldedFunction = (typeof FOLDED_FUNCTIONS)[number];

type Meta = {
  check: (...args: unknown[]) => unknown;
  evaluate: (ev: Evaluator, ast: Node, ctx: Context) => unknown;
};
type Node = {
  op: string;
  args: unknown;
  start?: number;
  readonly meta: Meta;
  clone(op: Meta & { name: string }, args: unknown): Node;
  setMeta(key: string, value: unknown): Node;
};
type Evaluator = { run(ast: Node, ctx: Context): unknown };
type Context = { getValue(key: unknown): unknown };

function isNode(x: unknown): x is Node {
  return isAstNode(x);
}

/** The one argument of a call to `names`, or null. */
function singleArgument(node: Node, names: ReadonlySet<string>): [string, Node] | null {
  if (node.op !== 'call' || !Array.isArray(node.args)) return null;
  const [name, params] = node.args as [unknown, unknown];
  if (typeof name !== 'string' || !names.has(name)) return null;
  if (!Array.isArray(params) || params.length !== 1 || !isNode(params[0])) return null;
  return [name, params[0]];
}

const FOLDED = new Set<string>(FOLDED_FUNCTIONS);

/**
 * Replaces each conversion call with a string literal argument by its value (see the top).
 * `convert` runs the function as CEL would; what it throws becomes a CelCompileError at the
 * literal.
 */
export function foldLiteralCalls(
  source: string,
  ast: ASTNode,
  convert: (fn: FoldedFunction, text: string) => unknown,
): void {
  visitAst<Node>(ast, (node) => {
    const call = singleArgument(node, FOLDED);
    if (call === null) return;
    const [fn, literal] = call;
    if (literal.op !== 'value' || typeof literal.args !== 'string') return;
    let value: unknown;
    try {
      value = convert(fn as FoldedFunction, literal.args);
    } catch (error) {
      if (!(error instanceof EvaluationError || error instanceof RangeError)) throw error;
      const summary = error instanceof EvaluationError ? error.summary : error.message;
      throw new CelCompileError(source, literal.start ?? 0, summary, { cause: error });
    }
    const valueOp = { ...literal.meta, name: 'value' };
    node.setMeta('alternate', literal.clone(valueOp, value));
  });
}

const MEMOIZED = new Set(['decimal', 'date']);

/**
 * Makes `decimal(x)` and `date(x)` (x not a literal) read the evaluation's ConversionMemo for
 * text arguments. Call after type-checking: it replaces the evaluation of the call only, so
 * compile-time checks and every non-text argument behave as written.
 */
export function memoizeConversions(ast: ASTNode): void {
  visitAst<Node>(ast, (node) => {
    const call = singleArgument(node, MEMOIZED);
    if (call === null) return;
    const [fn, argument] = call;
    if (argument.op === 'value') return;
    const asWritten = node.meta.evaluate;
    const convert =
      fn === 'decimal'
        ? (memo: ConversionMemo, text: string): unknown => memo.decimal(text)
        : (memo: ConversionMemo, text: string): unknown => memo.date(text);
    node.setMeta('evaluate', (ev: Evaluator, ast: Node, ctx: Context): unknown => {
      const memo = ctx.getValue(MEMO_KEY) as ConversionMemo | undefined;
      if (memo === undefined) return asWritten(ev, ast, ctx);
      const value = ev.run(argument, ctx);
      // Anything but text takes the call's own overloads (and errors); evaluating the
      // argument again is pure, and rare.
      if (typeof value !== 'string') return asWritten(ev, ast, ctx);
      return convert(memo, value);
    });
  });
}
