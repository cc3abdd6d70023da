import { describe, expect, it } from 'vitest';
import { benchRules } from '../../bench/bench-rules.js';
import type { Event } from '../../src/ledger/wire/wire-types.js';
import { evaluate } from '../../src/rules/evaluate.js';
import { indexRules } from '../../src/rules/rule-index.js';
import {
  archived,
  CONTEXT,
  created,
  exercised,
  input,
  PARTIES,
  PKG_V1,
  PKG_V2,
  rules,
} from './rule-fixtures.js';

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

function generator(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('evaluate with countMatch', () => {
  const ruleSet = rules(`${benchRules(100, 'ledger-effects')}${EXTRA.split('rules:\n')[1]!}`);
  const index = indexRules(ruleSet);

  it('gives the intents and errors of the explained evaluation and counts its matches', () => {
    const next = generator(7);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
    const witnesses = (): string[] =>
      [PARTIES.payer, PARTIES.issuer, PARTIES.auditor].filter(() => next() < 0.6);
    let counted = 0;
    let fired = 0;
    for (let i = 0; i < 600; i++) {
      const templateId = `${pick([PKG_V1, PKG_V2])}:${pick(['Invoice:Invoice', 'Payment:Payment', 'Payment:Receipt'])}`;
      const packageName = pick(['invoices', 'other']);
      const shape = next();
      const event: Event =
        shape < 0.5
          ? {
              CreatedEvent: created({
                templateId,
                packageName,
                witnessParties: witnesses(),
                createArgument: {
                  issuer: PARTIES.issuer,
                  payer: pick([PARTIES.payer, PARTIES.issuer]),
                  amount: pick(['5', '999.99', '1940', '3000', 'x', '60']),
                  currency: pick(['USD', 'EUR', 'CHF', 'GBP']),
                  due: pick(['2026-01-13', '2026-02-11', 'soon']),
                  reference: pick(['INV-17', 'INV-007', 'INV-0', 'INV-1']),
                },
              }),
            }
          : shape < 0.85
            ? {
                ExercisedEvent: exercised({
                  templateId,
                  packageName,
                  witnessParties: witnesses(),
                  choice: pick(['Accept', 'Remind', 'Cancel', 'Settle']),
                  consuming: next() < 0.5,
                  choiceArgument: { note: pick([null, 'note 16', 'note 26']) },
                  exerciseResult: pick(['00ab', '00a7', '00c1']),
                }),
              }
            : {
                ArchivedEvent: archived({ templateId, packageName, witnessParties: witnesses() }),
              };
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
