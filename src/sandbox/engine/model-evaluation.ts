import { CelDecimal } from '../../rules/cel/cel-decimal.js';
import { CelEvaluationError } from '../../rules/cel/cel-evaluation-error.js';
import type { DamlType, ModelExpr, PartiesExpr, ValueExpr } from '../model/model-types.js';
import { normalizeDamlValue } from '../model/normalize-daml-value.js';
import { engineError } from './engine-error.js';
import { fail } from './interpreter-abort.js';

// Evaluation of a model's expressions during interpretation: a failure ends the transaction
// with the DAML_INTERPRETATION_ERROR Canton would give.

/** The names a model expression sees: `this`, `arg`, `self` and the steps' named results. */
export type Scope = Record<string, unknown>;

export function evalExpr(expr: ModelExpr, scope: Scope): unknown {
  try {
    return expr.program.evaluate(scope);
  } catch (error) {
    if (error instanceof CelEvaluationError) {
      return fail(
        engineError(
          'DAML_INTERPRETATION_ERROR',
          9,
          `Interpretation error: Error: ${error.summary} in "${expr.source}" (${expr.pos.file}:${expr.pos.line}:${expr.pos.col})`,
        ),
      );
    }
    throw error;
  }
}

export function evalValue(value: ValueExpr, scope: Scope): unknown {
  if (value.kind === 'cel') return evalExpr(value.expr, scope);
  const out: Record<string, unknown> = {};
  for (const [k, v] of value.fields) out[k] = evalValue(v, scope);
  return out;
}

/** `value` as a Daml value of `type` (rounding Numerics to their scale). */
export function typed(type: DamlType, value: unknown, what: string): unknown {
  const r = normalizeDamlValue(type, value, '', { round: true });
  if (!r.ok)
    return fail(
      engineError(
        'DAML_INTERPRETATION_ERROR',
        9,
        `Interpretation error: Error: ${what}: ${r.problem.message}`,
      ),
    );
  return r.value;
}

/**
 * The parties the expressions name (fields of `argument`, CEL, or `signatories`: the
 * contract's, when there is one), sorted and unique.
 */
export function partiesOf(
  exprs: readonly PartiesExpr[],
  argument: Readonly<Record<string, unknown>>,
  scope: Scope,
  what: string,
  signatories: readonly string[] = [],
): string[] {
  const out: string[] = [];
  const add = (v: unknown): void => {
    if (v === null || v === undefined) return;
    if (typeof v === 'string' && v !== '') out.push(v);
    else if (Array.isArray(v)) v.forEach(add);
    else
      fail(
        engineError(
          'DAML_INTERPRETATION_ERROR',
          9,
          `Interpretation error: Error: ${what} must be parties, got ${JSON.stringify(celToJson(v))}`,
        ),
      );
  };
  for (const e of exprs) {
    add(
      e.kind === 'field'
        ? (argument[e.field] ?? (scope.arg as Record<string, unknown> | undefined)?.[e.field])
        : e.kind === 'signatories'
          ? signatories
          : evalExpr(e.expr, scope),
    );
  }
  return sortedUnique(out);
}

export function sortedUnique(parties: Iterable<string>): string[] {
  return [...new Set(parties)].sort();
}

/** CEL values to plain Daml-LF JSON, for results without a declared type. */
export function celToJson(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof CelDecimal) return value.toString();
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(celToJson);
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of value as Map<unknown, unknown>) out[String(k)] = celToJson(v);
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = celToJson(v);
    return out;
  }
  return value;
}
