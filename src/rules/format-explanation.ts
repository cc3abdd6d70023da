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
  const on =
    e.batch !== undefined
      ? ` for a batch of ${batchText(e.batch.contractIds)}`
      : e.contractId === null
        ? ''
        : ` for contract ${e.contractId}`;
  if (!e.triggerMatched) {
    return [`${e.ruleId} (${where}): not matched${on}: ${e.mismatch?.message ?? 'no match'}`];
  }
  const verdict = e.fired
    ? `fired${on} (${e.intents} command${e.intents === 1 ? '' : 's'})`
    : e.error !== null
      ? `failed${on}`
      : e.selected === true
        ? `selected${on} (into a batch)`
        : e.selected === false
          ? `not selected${on}`
          : e.batch !== undefined
            ? `not fired${on}: fewer than batch.min (${e.batch.min})`
            : `not fired${on}`;
  const lines = [`${e.ruleId} (${where}): ${verdict}`];
  // A rule that failed while selecting (its interface view, a batch's groupBy: phase `when`)
  // did not fire, conditions or not; a batch has none of its own (its contracts' explanations
  // have them).
  if (e.conditions.length === 0 && e.error?.phase !== 'when' && e.batch === undefined) {
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

/** "3 contracts (00a, 00b, 00c)", the ids cut after five. */
function batchText(ids: readonly string[]): string {
  const shown = ids.slice(0, 5).join(', ');
  const more = ids.length > 5 ? `, … ${ids.length - 5} more` : '';
  return `${ids.length} contract${ids.length === 1 ? '' : 's'} (${shown}${more})`;
}
