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
  /**
   * The reference of a `created` or `forEach` rule that no package says is a template or an
   * interface (no catalogue, or not its package): taken as a template, it may be an interface,
   * so reading `view` is a warning, not an error. Null otherwise.
   */
  readonly mayBeInterface: string | null;
  /** The catalogue's types of its Daml values; null without a catalogue or an unknown template. */
  readonly valueTypes: ValueRootTypes | null;
  /** The guards that hold where the expression runs (its own and earlier `when` conditions'). */
  readonly guards: readonly Guard[];
};

export type ExpressionProblem = PathProblem & {
  readonly code: RuleProblemCode;
  readonly severity: 'error' | 'warning';
};

/** `view` read in a rule whose reference may be an interface: what the warning says. */
function viewUnchecked(offset: number, shape: EventShape, ref: string): PathProblem {
  const variable = shape === 'contract' ? 'contract' : 'event';
  return {
    offset,
    message: `${variable}.view is the view of an interface, and no package given says whether "${ref}" is one: without its package it is taken as a template, which has no view`,
    hint: "give the package to check the rule and to run it on the interface: validate or test with --dar FILE or --model FILE, or --config with ledger.packages or a participant (run reads the participant's packages)",
  };
}

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
  const shape = context.eventShape;
  if (shape !== null) {
    const maybe = context.mayBeInterface;
    const unknown = unknownEventFieldReads(
      program.reads,
      shape,
      context.eventView || maybe !== null,
    );
    add('UNKNOWN_EVENT_FIELD', unknown);
    if (maybe !== null && !context.eventView) {
      const reported = new Set(unknown.map((p) => p.offset));
      const views = unknownEventFieldReads(program.reads, shape).filter(
        (p) => !reported.has(p.offset),
      );
      add(
        'UNKNOWN_EVENT_FIELD',
        views.map((p) => viewUnchecked(p.offset, shape, maybe)),
        'warning',
      );
    }
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
