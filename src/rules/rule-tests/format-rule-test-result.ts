import { formatExplanation } from '../format-explanation.js';
import type { RuleTestFileResult } from './run-rule-tests.js';

/**
 * A test runner's report of one file: ✓ or ✗ per case, failures with their diff (`-` expected,
 * `+` actual) and, with `verbose`, the explanations of every case.
 */
export function formatRuleTestResult(
  result: RuleTestFileResult,
  options: { readonly verbose?: boolean } = {},
): string {
  const lines = [result.path];
  for (const c of result.cases) {
    lines.push(`  ${c.passed ? '✓' : '✗'} ${c.name}`);
    if (!c.passed) {
      lines.push(`      at ${c.pos.file}:${c.pos.line}:${c.pos.col}`);
      for (const f of c.failures) lines.push(...f.map((l) => `      ${l}`));
    }
    if (options.verbose === true) {
      for (const e of c.explanations) lines.push(...formatExplanation(e).map((l) => `      ${l}`));
    }
  }
  return `${lines.join('\n')}\n`;
}
