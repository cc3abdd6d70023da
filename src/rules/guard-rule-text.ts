import { guardText, textPos, type TextGuardProblem } from '../core/source/guard-text.js';
import { DEFAULT_SOURCE_LIMITS } from '../core/source/source-limits.js';

/**
 * The config loader's guard until it moves onto core/source (issue 14 §3), which has replaced
 * this for rule and rule-test files. Delete it then.
 */
export function guardRuleText(
  text: string,
  maxBytes: number = DEFAULT_SOURCE_LIMITS.maxBytes,
): TextGuardProblem | null {
  return guardText(text, { ...DEFAULT_SOURCE_LIMITS, maxBytes });
}

export { textPos };
