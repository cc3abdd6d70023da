import type { LeadingEquality } from './leading-equalities.js';
import type { LeadingThreshold } from './leading-thresholds.js';
import type { Comparison, Guard, NumberOperand, Operand, ReadPath } from './read-paths.js';

/**
 * A compiled CEL expression: parse and type-check once, evaluate many times. Evaluation is pure
 * (no I/O, no clock); it throws CelEvaluationError when the expression fails at run time.
 */
export interface CelProgram {
  /** The expression text as written. */
  readonly source: string;
  /** The field paths it reads, from its AST (see read-paths.ts). */
  readonly reads: readonly ReadPath[];
  /** The paths it compares or computes with a number literal (see read-paths.ts). */
  readonly numberOperands: readonly NumberOperand[];
  /** Its comparisons and arithmetic with a field path on a side, with the operand types. */
  readonly comparisons: readonly Comparison[];
  /** Its null tests of paths and comparisons of variant tags (see read-paths.ts). */
  readonly guards: readonly Guard[];
  /** The equalities of its top-level `&&` chain with text known before evaluation. */
  readonly equalities: readonly LeadingEquality[];
  /**
   * The comparisons of its top-level `&&` chain of a subexpression over `event` with a literal,
   * made when first asked (the index asks for the first `when` condition of event rules only).
   * Absent: none known.
   */
  readonly thresholds?: () => readonly LeadingThreshold[];
  /** Its own type where known: a field path, a literal's or a function's type. */
  readonly result: Operand;
  /** Whether closures (compile-closure.ts) evaluate it where they can, before cel-js. */
  readonly closure?: boolean;
  evaluate(variables: Readonly<Record<string, unknown>>): unknown;
}
