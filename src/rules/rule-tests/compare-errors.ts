import type { RuleEvaluationError } from '../evaluation-result.js';
import { formatRuleEvaluationError } from '../evaluation-result.js';
import type { ExpectedError } from './rule-test-case.js';

/**
 * The failures of a case's `expectErrors:` against the rule errors raised; without
 * `expectErrors:`, every rule error is a failure.
 */
export function compareErrors(
  expected: readonly ExpectedError[] | null,
  errors: readonly RuleEvaluationError[],
): string[][] {
  const failures: string[][] = [];
  const used = new Set<number>();
  for (const exp of expected ?? []) {
    const i = errors.findIndex(
      (e, j) =>
        !used.has(j) &&
        e.ruleId === exp.rule &&
        (exp.message === null || e.message.includes(exp.message)) &&
        (exp.code === null || e.code === exp.code),
    );
    if (i >= 0) {
      used.add(i);
      continue;
    }
    const ofRule = errors.filter((e) => e.ruleId === exp.rule);
    failures.push([
      `expected an error from rule ${exp.rule}${exp.message === null ? '' : ` containing "${exp.message}"`} (line ${exp.pos.line})`,
      ...(ofRule.length === 0
        ? [`  + rule ${exp.rule} raised no error`]
        : ofRule.map((e) => `  + ${formatRuleEvaluationError(e)}`)),
    ]);
  }
  errors.forEach((e, j) => {
    if (used.has(j)) return;
    failures.push([
      `unexpected rule error${expected === null ? ' (add `expectErrors:` if it is intended)' : ''}`,
      `  + ${formatRuleEvaluationError(e)}`,
    ]);
  });
  return failures;
}
