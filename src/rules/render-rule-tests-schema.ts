import { TEST_FILE_SCHEMA } from './rule-tests/index.js';

/**
 * The published schema of rule test files (schema/rule-tests.schema.json): the one
 * `parseRuleTestFile` validates with, with the header editors expect.
 */
export function ruleTestsSchema(): object {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'https://ledgerbot.dev/schema/rule-tests.schema.json',
    title: 'ledgerbot rule test file (*.test.yaml; see docs/rules.md, "Testing rules")',
    ...TEST_FILE_SCHEMA,
  };
}

/** The published schema file's exact text. */
export function renderRuleTestsSchema(): string {
  return `${JSON.stringify(ruleTestsSchema(), null, 2)}\n`;
}
