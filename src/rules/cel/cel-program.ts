import type { NumberOperand, ReadPath } from './read-paths.js';

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
  evaluate(variables: Readonly<Record<string, unknown>>): unknown;
}
