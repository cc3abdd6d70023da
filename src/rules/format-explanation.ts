import type { Explanation } from './evaluation-result.js';

/**
 * One explanation as lines a person reads: "why did (not) my rule fire". The first line names
 * the rule and the verdict; the next ones give each condition's result and the error, if any.
 *
 *     accept-small-invoices (rules/accept.yaml:6:5): not fired
 *       when[0] event.createArgument.currency == "USD" → true
 *       when[1] decimal(event.createArgument.amount) < decimal("1000") → false
 */
export function formatExplanation(e: Explanation): string[] {
  const where = `${e.pos.file}:${e.pos.line}:${e.pos.col}`;
  const on = e.contractId === null ? '' : ` for contract ${e.contractId}`;
  if (!e.triggerMatched) {
    return [`${e.ruleId} (${where}): not matched${on}: ${e.mismatch?.message ?? 'no match'}`];
  }
  const verdict = e.fired
    ? `fired${on} (${e.intents} command${e.intents === 1 ? '' : 's'})`
    : e.error !== null
      ? `failed${on}`
      : `not fired${on}`;
  const lines = [`${e.ruleId} (${where}): ${verdict}`];
  // A failed interface view stops the rule before its conditions: nothing to say about them.
  if (e.conditions.length === 0 && e.error?.code !== 'INTERFACE_VIEW_FAILED') {
    lines.push('  no conditions (when is empty): always fires');
  }
  for (const c of e.conditions) {
    lines.push(`  when[${c.index}] ${c.source} → ${c.outcome}`);
  }
  if (e.error !== null) {
    const at = `${e.error.pos.file}:${e.error.pos.line}:${e.error.pos.col}`;
    const action = e.error.actionIndex === null ? '' : ` (then[${e.error.actionIndex}])`;
    lines.push(`  error${action} at ${at}: ${e.error.message}`);
  }
  return lines;
}
