import { LedgerbotError } from '../core/ledgerbot-error.js';
import { formatRuleProblem, type RuleProblem } from './rule-problem.js';

/**
 * Rule files that cannot be loaded. Carries every problem (errors and warnings) of every file;
 * the message lists them in `file:line:col: message` form.
 */
export class RuleError extends LedgerbotError {
  readonly problems: readonly RuleProblem[];

  constructor(problems: readonly RuleProblem[], options?: { cause?: unknown }) {
    const errors = problems.filter((p) => p.severity === 'error');
    const shown = errors.slice(0, 20).map(formatRuleProblem);
    const more =
      errors.length > shown.length ? [`... and ${errors.length - shown.length} more`] : [];
    super(
      'INVALID_RULES',
      [
        `${errors.length} problem(s) in the rule files; fix them and load again:`,
        ...shown,
        ...more,
      ].join('\n'),
      options,
    );
    this.problems = problems;
  }
}
