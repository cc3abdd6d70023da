import { LedgerbotError } from '../core/ledgerbot-error.js';
import type { SourcePos } from './compiled-rule.js';
import type { RuleEvaluationErrorCode } from './evaluation-result.js';

/** Internal to the rules layer: an action that cannot become a command; fireRule catches it. */
export class ActionProblem extends LedgerbotError {
  readonly problem: RuleEvaluationErrorCode;
  readonly expression: string | null;
  readonly pos: SourcePos;

  constructor(
    problem: RuleEvaluationErrorCode,
    message: string,
    expression: string | null,
    pos: SourcePos,
  ) {
    super(problem, message);
    this.problem = problem;
    this.expression = expression;
    this.pos = pos;
  }
}

/** A value as a rule error names it: its kind, and a short text as itself. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string')
    return `the text "${value.length > 40 ? `${value.slice(0, 40)}…` : value}"`;
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'bigint' || typeof value === 'number') return `the number ${value}`;
  return `a ${typeof value === 'object' ? (value.constructor?.name ?? 'value') : typeof value}`;
}
