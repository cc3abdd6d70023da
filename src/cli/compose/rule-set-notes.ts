import type { RuleSet } from '../../rules/compiled-rule.js';

/** What a directory named in `rules:` (or given to `validate`) is searched for. */
export const RULE_FILE_PATTERN = '*.yaml, *.yml (not *.test.yaml, which hold rule tests)';

/**
 * The error for rule paths that hold no rule file at all: a wrong `rules:` entry, an empty or
 * unmounted directory. The bot refuses to start on it (exit 2) rather than run with nothing.
 */
export function noRuleFilesMessage(paths: readonly string[]): string {
  const where = paths.length === 1 ? paths[0]! : `any of ${paths.join(', ')}`;
  return (
    `no rule files in ${where}: a directory is searched for ${RULE_FILE_PATTERN}; ` +
    'point `rules:` (or the paths given) at the rule files, or add one'
  );
}

/**
 * The warning for a rule set with no enabled rule (every rule `enabled: false`, or files that
 * define none), or undefined when some rule is enabled. Such a bot runs idle: ready, reading
 * nothing and submitting nothing, until a reload enables a rule.
 */
export function idleRuleSetWarning(ruleSet: RuleSet, files: number): string | undefined {
  const rules = ruleSet.rules.length;
  if (ruleSet.rules.some((r) => r.enabled)) return undefined;
  const what =
    rules === 0
      ? `the ${files} rule file(s) define no rule`
      : `all ${rules} rule(s) of the ${files} rule file(s) have \`enabled: false\``;
  return `no rule is enabled: ${what}; the bot runs idle (ready, submitting nothing) until a rule is enabled and the rules are reloaded`;
}
