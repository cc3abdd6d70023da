import { describe, expect, it } from 'vitest';
import { benchRules } from '../../bench/bench-rules.js';
import type { Event } from '../../src/ledger/wire/wire-types.js';
import { evaluate } from '../../src/rules/evaluate.js';
import { firstConditionFalse } from '../../src/rules/fire-rule.js';
import { indexRules } from '../../src/rules/rule-index.js';
import { randomEvents } from './random-events.js';
import { CONTEXT, created, input, PKG_V2, rules } from './rule-fixtures.js';

/**
 * The bot's hot path (evaluate's `countMatch`) skips the rules whose trigger cannot match and
 * builds no explanations: it must give the same intents and errors as the explained evaluation,
 * and count exactly the rules it explains as matched, with the same "a condition was false".
 */

const EXTRA = `version: 1
rules:
  - id: disabled
    enabled: false
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    then: [{ exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Accept }, actAs: [payer] }]
  - id: by-package-id
    on: { created: '${PKG_V2}:Invoice:Invoice', party: auditor }
    when: decimal(event.createArgument.amount) > decimal("10")
    then: [{ exercise: { template: '${PKG_V2}:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Accept }, actAs: [auditor] }]
  - id: non-consuming-remind
    on:
      exercised: { template: '#invoices:Invoice:Invoice', choice: Remind, consuming: false }
      party: issuer
    then: [{ exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Accept }, actAs: [issuer] }]
`;

describe('evaluate with countMatch', () => {
  const ruleSet = rules(`${benchRules(100, 'ledger-effects')}${EXTRA.split('rules:\n')[1]!}`);
  const index = indexRules(ruleSet);

  it('gives the intents and errors of the explained evaluation and counts its matches', () => {
    let counted = 0;
    let fired = 0;
    for (const event of randomEvents(7, 600)) {
      const explained = evaluate(index, input(event), CONTEXT);
      const counts: [string, boolean][] = [];
      const hot = evaluate(index, input(event), CONTEXT, {
        countMatch: (ruleId, conditionFalse) => counts.push([ruleId, conditionFalse]),
      });
      expect(hot.intents).toEqual(explained.intents);
      expect(hot.errors).toEqual(explained.errors);
      expect(hot.explanations).toEqual([]);
      expect(counts).toEqual(
        explained.explanations
          .filter((x) => x.triggerMatched)
          .map((x) => [x.ruleId, x.conditions.some((c) => c.outcome === 'false')]),
      );
      counted += counts.length;
      fired += hot.intents.length;
    }
    expect(counted).toBeGreaterThan(2_000);
    expect(fired).toBeGreaterThan(50);
  });

  it('gives the same with and without the threshold guards, counted or explained', () => {
    const without = indexRules(ruleSet, { thresholds: false });
    const counts = (i: typeof index, event: Event): [string, boolean][] => {
      const out: [string, boolean][] = [];
      evaluate(i, input(event), CONTEXT, { countMatch: (id, f) => out.push([id, f]) });
      return out;
    };
    let skipped = 0;
    for (const event of randomEvents(13, 600)) {
      const a = evaluate(index, input(event), CONTEXT);
      const b = evaluate(without, input(event), CONTEXT);
      expect(a).toEqual(b);
      expect(counts(index, event)).toEqual(counts(without, event));
      // A rule a threshold skipped is explained as its first condition false, unevaluated.
      skipped += a.explanations.filter((x, i) => {
        const skip = firstConditionFalse(ruleSet.rules.find((r) => r.id === x.ruleId)!);
        return x === skip && b.explanations[i] !== skip;
      }).length;
    }
    expect(skipped).toBeGreaterThan(100);
  });

  it('is ignored when every rule is explained', () => {
    const event: Event = { CreatedEvent: created() };
    const counts: string[] = [];
    const all = evaluate(index, input(event), CONTEXT, {
      explain: 'all',
      countMatch: (ruleId) => counts.push(ruleId),
    });
    expect(all.explanations).toHaveLength(ruleSet.rules.length);
    expect(counts).toEqual([]);
  });
});
