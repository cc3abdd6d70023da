import { LedgerbotError } from '../../core/ledgerbot-error.js';

/** A CEL expression that failed at run time (missing field, no matching overload, division by zero). */
export class CelEvaluationError extends LedgerbotError {
  readonly expression: string;
  readonly summary: string;

  constructor(expression: string, summary: string, options?: { cause?: unknown }) {
    super('CEL_EVALUATION_ERROR', `${summary} in "${expression}"`, options);
    this.expression = expression;
    this.summary = summary;
  }
}
