import { parseYamlSource, schemaChecker } from '../../src/core/source/index.js';
import { CelEnvironment } from '../../src/rules/cel/cel-environment.js';
import type { RetryOptions } from '../../src/rules/rule-options.js';
import type { PackageCatalogue } from '../../src/daml-lf/package-catalogue.js';
import type { RuleProblem } from '../../src/rules/rule-problem.js';
import { RuleScope } from '../../src/rules/rule-scope.js';
import { RULES_SCHEMA } from '../../src/rules/rules-schema.js';

const cel = CelEnvironment.create();
const check = schemaChecker(RULES_SCHEMA, { ajv: { useDefaults: true } });

/**
 * The scope of the first rule of a rule file, after the schema has filled in its defaults (as
 * the loader does), for testing one compile step on its own.
 */
export function ruleScope(
  text: string,
  options: { defaultRetry?: RetryOptions; packages?: PackageCatalogue; parties?: string[] } = {},
): { scope: RuleScope; problems: RuleProblem[] } {
  const parsed = parseYamlSource('r.yaml', text, { noun: 'rule file' });
  if (!parsed.ok) throw new Error(parsed.problems.map((p) => p.message).join('\n'));
  const { value, at } = parsed.source;
  const result = check(value, at);
  if (!result.valid) throw new Error(result.problems.map((p) => p.message).join('\n'));
  const problems: RuleProblem[] = [];
  const raw = (value as { rules: Record<string, unknown>[] }).rules[0]!;
  const scope = new RuleScope(raw, ['rules', 0], at, {
    cel,
    parties: options.parties === undefined ? undefined : new Set(options.parties),
    packages: options.packages,
    maxFileBytes: 1 << 20,
    defaultRetry: options.defaultRetry,
    problems,
  });
  return { scope, problems };
}

/** A rule file with one event rule; `extra` lines are added to the rule (indent 4). */
export function oneRule(extra = '', action = ''): string {
  return `version: 1
rules:
  - id: r1
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Remind${action} }
        actAs: [payer]
${extra}`;
}
