import { formatSourceProblem } from '../core/source/source-problem.js';

/**
 * One problem found while loading rule files. Positions are 1-based. `code` is stable and
 * machine-readable (e.g. UNKNOWN_KEY, CEL_COMPILE_ERROR); `message` says what is wrong and `hint`,
 * when there is one, what to write instead.
 */
export type RuleProblem = {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  readonly message: string;
  readonly hint?: string;
  readonly code: RuleProblemCode;
  readonly severity: 'error' | 'warning';
};

export type RuleProblemCode =
  | 'FILE_TOO_LARGE'
  | 'YAML_SYNTAX'
  | 'YAML_TOO_COMPLEX'
  | 'SCHEMA'
  | 'UNKNOWN_KEY'
  | 'MISSING_KEY'
  | 'WRONG_TYPE'
  | 'BAD_VALUE'
  | 'UNSUPPORTED_VERSION'
  | 'BAD_RULE_ID'
  | 'DUPLICATE_RULE_ID'
  | 'TRIGGER'
  | 'BAD_TEMPLATE_REF'
  | 'PACKAGE_ID_REF'
  | 'UNKNOWN_PACKAGE'
  | 'UNKNOWN_TEMPLATE'
  | 'UNKNOWN_INTERFACE'
  | 'REF_KIND'
  | 'UNKNOWN_CHOICE'
  | 'UNKNOWN_FIELD'
  | 'UNKNOWN_EVENT_FIELD'
  | 'NUMERIC_AS_NUMBER'
  | 'TYPE_MISMATCH'
  | 'UNGUARDED_OPTIONAL'
  | 'UNGUARDED_VARIANT'
  | 'MISSING_FIELD'
  | 'BAD_ARGUMENT'
  | 'BAD_LITERAL'
  | 'UNKNOWN_PARTY'
  | 'BAD_CRON'
  | 'BAD_TIMEZONE'
  | 'BAD_DURATION'
  | 'TEMPLATE_NOT_ALLOWED'
  | 'BAD_TEMPLATE'
  | 'CEL_COMPILE_ERROR'
  | 'CEL_TOO_COMPLEX'
  | 'NO_RULES';

/** `file:line:col: message` (and an indented hint line), the form editors and CI understand. */
export function formatRuleProblem(problem: RuleProblem): string {
  return formatSourceProblem(
    problem.severity === 'warning'
      ? { ...problem, message: `warning: ${problem.message}` }
      : problem,
  );
}
