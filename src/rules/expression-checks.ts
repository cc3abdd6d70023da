import type { CelProgram } from './cel/cel-program.js';
import type { Guard } from './cel/read-paths.js';
import type { PathProblem } from './daml-path-types.js';
import { unknownEventFieldReads, type EventShape } from './event-fields.js';
import { comparisonProblems, unguardedReads } from './expression-types.js';
import type { RuleProblemCode } from './rule-problem.js';
import {
  numberTextOperands,
  unknownFieldReads,
  type ValueRootTypes,
} from './unknown-field-reads.js';

/** What an expression is checked against: the trigger's event shape and the catalogue's types. */
export type ExpressionContext = {
  /** What `event` (or `contract`) holds; null when unknown or absent. */
  readonly eventShape: EventShape | null;
  /** Whether it has the interface view `view`. */
  readonly eventView: boolean;
  /** The catalogue's types of its Daml values; null without a catalogue or an unknown template. */
  readonly valueTypes: ValueRootTypes | null;
  /** The guards that hold where the expression runs (its own and earlier `when` conditions'). */
  readonly guards: readonly Guard[];
};

export type ExpressionProblem = PathProblem & {
  readonly code: RuleProblemCode;
  readonly severity: 'error' | 'warning';
};

/**
 * Every problem of one compiled expression, each at its offset in the expression: fields the
 * event does not have (UNKNOWN_EVENT_FIELD), Daml fields the catalogue's types do not have
 * (UNKNOWN_FIELD), Numeric/Int64 text used as a number (NUMERIC_AS_NUMBER), comparisons of
 * mismatched types (TYPE_MISMATCH), and unguarded reads below an Optional or a variant
 * (UNGUARDED_OPTIONAL, UNGUARDED_VARIANT: warnings).
 */
export function checkExpression(
  program: CelProgram,
  context: ExpressionContext,
): ExpressionProblem[] {
  const out: ExpressionProblem[] = [];
  const add = (
    code: RuleProblemCode,
    found: readonly PathProblem[],
    severity: 'error' | 'warning' = 'error',
  ): void => {
    for (const p of found) out.push({ ...p, code, severity });
  };
  if (context.eventShape !== null) {
    add(
      'UNKNOWN_EVENT_FIELD',
      unknownEventFieldReads(program.reads, context.eventShape, context.eventView),
    );
  }
  const known = context.valueTypes;
  if (known === null) return out;
  add('UNKNOWN_FIELD', unknownFieldReads(program.reads, known));
  add('NUMERIC_AS_NUMBER', numberTextOperands(program.numberOperands, known));
  const taken = new Set(out.map((p) => p.offset));
  add(
    'TYPE_MISMATCH',
    comparisonProblems(program.comparisons, known).filter((p) => !taken.has(p.offset)),
  );
  for (const read of unguardedReads(program.reads, context.guards, known)) {
    if (taken.has(read.offset)) continue;
    const { kind, ...problem } = read;
    add(kind === 'optional' ? 'UNGUARDED_OPTIONAL' : 'UNGUARDED_VARIANT', [problem], 'warning');
  }
  return out;
}
