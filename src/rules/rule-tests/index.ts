/** Rule unit tests (`ledgerbot test`): parse a test file, run it against loaded rules, report. */
export { formatRuleTestResult } from './format-rule-test-result.js';
export { testPackageId } from './given-event.js';
export { parseRuleTestFile } from './parse-rule-test-file.js';
export {
  RULE_TEST_KINDS,
  type ExpectedCommand,
  type ExpectedError,
  type GivenEvent,
  type ParsedRuleTestFile,
  type RuleTestCase,
  type RuleTestFile,
} from './rule-test-case.js';
export { TEST_FILE_SCHEMA } from './rule-test-file-schema.js';
export {
  runRuleTests,
  type RuleTestCaseResult,
  type RuleTestFileResult,
  type RunRuleTestsOptions,
} from './run-rule-tests.js';
