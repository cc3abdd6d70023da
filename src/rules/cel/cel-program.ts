import type { ReadPath } from './read-paths.js';

/**
 * A compiled CEL expression: parse and type-check once, evaluate many times. Evaluation is pure
 * (no I/O, no clock); it throws CelEvaluationError when the expression fails at run time.
 */
export interface CelProgram {
  /** The expression text as written. */
  readonly source: string;
  /** The field paths it reads, from its AST (see read-paths.ts). */
  readonly reads: readonly ReadPath[];
  evaluate(variables: Readonly<Record<string, unknown>>): unknown;
}
