import { parseDamlDate } from './daml-time-text.js';
import { isAstNode, type AstNode } from './visit-ast.js';

/**
 * The equalities an expression's result hinges on: the operands of its top-level `&&` chain that
 * compare a field path with text known before evaluation (`event.createArgument.currency ==
 * "USD"`, `… == parties.payer`, `… in ["USD", "EUR"]`) or test it with a text literal
 * (`….startsWith("INV-")`, `endsWith`, `contains`). CEL's `&&` is false as soon as one operand
 * is false, whatever the others give, errors included, so when the path holds text that the
 * equality rejects, the whole expression is false without evaluating it (rule-index.ts).
 */
export type LeadingEquality = {
  /** The variable the path starts from (`event`, `contract`). */
  readonly variable: string;
  /** Field names below it, e.g. ['createArgument', 'currency']. */
  readonly fields: readonly string[];
  /** What the text must be: one of these literals, or the id of a party alias. */
  readonly expected:
    | { readonly kind: 'text'; readonly values: readonly string[] }
    | { readonly kind: 'party'; readonly alias: string }
    /** `path.startsWith(text)`, `endsWith`, `contains`: string methods, as CEL runs them. */
    | { readonly kind: TextTest; readonly text: string }
    /**
     * `date(path) == date("2025-01-31")`: a Daml Date has one text, so another valid date text is
     * another day (text that is not a date decides nothing: `date()` fails on it).
     */
    | { readonly kind: 'date'; readonly text: string };
};

export type TextTest = 'startsWith' | 'endsWith' | 'contains';

const TEXT_TESTS = new Set<string>(['startsWith', 'endsWith', 'contains']);

/** `a.b.c` from an identifier through plain field selections (no `[]`, no `.?`), else null. */
function selectPath(node: AstNode): { variable: string; fields: string[] } | null {
  const fields: string[] = [];
  let at: AstNode = node;
  for (let depth = 0; depth < 100; depth++) {
    if (at.op === 'id') {
      return typeof at.args === 'string' ? { variable: at.args, fields: fields.reverse() } : null;
    }
    if (at.op !== '.' || !Array.isArray(at.args)) return null;
    const [target, field] = at.args as [unknown, unknown];
    if (!isAstNode(target) || typeof field !== 'string') return null;
    fields.push(field);
    at = target;
  }
  return null;
}

function textLiteral(node: AstNode): string | null {
  return node.op === 'value' && typeof node.args === 'string' ? node.args : null;
}

function expectedOf(node: AstNode): LeadingEquality['expected'] | null {
  const text = textLiteral(node);
  if (text !== null) return { kind: 'text', values: [text] };
  const path = selectPath(node);
  if (path !== null && path.variable === 'parties' && path.fields.length === 1) {
    return { kind: 'party', alias: path.fields[0]! };
  }
  return null;
}

function textTestOf(node: AstNode): LeadingEquality | null {
  if (node.op !== 'rcall' || !Array.isArray(node.args) || node.args.length !== 3) return null;
  const [name, receiver, params] = node.args as [unknown, unknown, unknown];
  if (typeof name !== 'string' || !TEXT_TESTS.has(name) || !isAstNode(receiver)) return null;
  if (!Array.isArray(params) || params.length !== 1 || !isAstNode(params[0])) return null;
  const path = selectPath(receiver);
  const text = textLiteral(params[0]);
  if (path === null || path.variable === 'parties' || text === null) return null;
  return { ...path, expected: { kind: name as TextTest, text } };
}

/** The one argument of a call to `name`, or null. */
function argumentOf(node: AstNode, name: string): AstNode | null {
  if (node.op !== 'call' || !Array.isArray(node.args)) return null;
  const [fn, params] = node.args as [unknown, unknown];
  if (fn !== name || !Array.isArray(params) || params.length !== 1 || !isAstNode(params[0])) {
    return null;
  }
  return params[0];
}

/** `date(path) == date("…")` with a literal that is a date (else no guard: it would fail). */
function dateEqualityOf(a: AstNode, b: AstNode): LeadingEquality | null {
  const field = argumentOf(a, 'date');
  const literal = argumentOf(b, 'date');
  if (field === null || literal === null) return null;
  const path = selectPath(field);
  const text = textLiteral(literal);
  if (path === null || path.variable === 'parties' || text === null) return null;
  return parseDamlDate(text) === null ? null : { ...path, expected: { kind: 'date', text } };
}

function equalityOf(node: AstNode): LeadingEquality | null {
  if (node.op === 'rcall') return textTestOf(node);
  if (!Array.isArray(node.args) || node.args.length !== 2) return null;
  const [left, right] = node.args as [unknown, unknown];
  if (!isAstNode(left) || !isAstNode(right)) return null;
  if (node.op === '==') {
    const dates = dateEqualityOf(left, right) ?? dateEqualityOf(right, left);
    if (dates !== null) return dates;
    for (const [a, b] of [
      [left, right],
      [right, left],
    ] as const) {
      const path = selectPath(a);
      const expected = expectedOf(b);
      if (path !== null && path.variable !== 'parties' && expected !== null) {
        return { ...path, expected };
      }
    }
    return null;
  }
  if (node.op === 'in' && right.op === 'list' && Array.isArray(right.args)) {
    const path = selectPath(left);
    const values = (right.args as unknown[]).map((x) => (isAstNode(x) ? textLiteral(x) : null));
    if (path === null || path.variable === 'parties' || values.some((v) => v === null)) {
      return null;
    }
    return { ...path, expected: { kind: 'text', values: values as string[] } };
  }
  return null;
}

/** The leading equalities of a parsed expression (see the top), in source order. */
export function leadingEqualities(ast: unknown): LeadingEquality[] {
  const out: LeadingEquality[] = [];
  const conjuncts = (node: unknown, depth: number): void => {
    if (!isAstNode(node) || depth > 200) return;
    if (node.op === '&&' && Array.isArray(node.args)) {
      for (const operand of node.args as unknown[]) conjuncts(operand, depth + 1);
      return;
    }
    const equality = equalityOf(node);
    if (equality !== null) out.push(equality);
  };
  conjuncts(ast, 0);
  return out;
}
