import { describe, expect, it } from 'vitest';
import { evaluate, settleMatchCounts, type EvaluationContext } from '../../src/rules/evaluate.js';
import { firstConditionFalse } from '../../src/rules/fire-rule.js';
import { indexRules, triggerIndexKey, type RuleIndex } from '../../src/rules/rule-index.js';
import { visitPlanOf } from '../../src/rules/rule-index-groups.js';
import { checksOf } from '../../src/rules/threshold-guards.js';
import { BotMetrics } from '../../src/runtime/bot-metrics.js';
import { CONTEXT, PARTIES, created, input, rules } from './rule-fixtures.js';

/**
 * Rules grouped by their guards (rule-index-groups.ts): one lookup per event decides a group, and
 * the match counters read as if each rule had been counted on its own. With them, the threshold
 * guards (threshold-guards.ts): one value and one binary search per event decide the rules that
 * compare one subexpression with a literal.
 */

const TESTS: readonly (readonly [string, string])[] = [
  ['usd', 'event.createArgument.currency == "USD"'],
  ['eur', 'event.createArgument.currency == "EUR"'],
  ['eur-or-chf', 'event.createArgument.currency in ["EUR", "CHF"]'],
  ['gbp', '"GBP" == event.createArgument.currency'],
  ['inv-1', 'event.createArgument.reference.startsWith("INV-1")'],
  ['inv-2', 'event.createArgument.reference.startsWith("INV-2")'],
  ['x-1', 'event.createArgument.reference.startsWith("X-1")'],
  ['ends-7', 'event.createArgument.reference.endsWith("7")'],
  ['ends-1', 'event.createArgument.reference.endsWith("1")'],
  ['ends-17', 'event.createArgument.reference.endsWith("17")'],
  ['ends-27', 'event.createArgument.reference.endsWith("27")'],
  ['has-17', 'event.createArgument.reference.contains("17")'],
  ['due-1', 'date(event.createArgument.due) == date("2025-03-01")'],
  ['due-2', 'date(event.createArgument.due) == date("2025-03-02")'],
  ['payer-is-payer', 'event.createArgument.payer == parties.payer'],
  ['payer-is-payer-too', 'parties.payer == event.createArgument.payer'],
  ['payer-is-auditor', 'event.createArgument.payer == parties.auditor'],
  ['payer-is-auditor-too', 'event.createArgument.payer == parties.auditor'],
  ['over-100', 'decimal(event.createArgument.amount) > decimal("100")'],
  ['from-5000', 'decimal(event.createArgument.amount) >= decimal("5000")'],
  ['from-100', 'decimal(event.createArgument.amount) >= decimal("100.0")'],
  ['double-over-9000', 'decimal(event.createArgument.amount) * 2 > decimal("9000")'],
  ['double-over-100', 'decimal(event.createArgument.amount) * 2 > decimal("100")'],
  ['under-5000', 'decimal("5000") > decimal(event.createArgument.amount)'],
  ['up-to-10', 'decimal(event.createArgument.amount) <= 10'],
  ['below-100', 'decimal(event.createArgument.amount) < decimal("100")'],
  [
    'payer-over-50',
    'event.createArgument.payer == parties.payer && decimal(event.createArgument.amount) * 2 > decimal("50")',
  ],
];

/** Each test for both parties, with a second condition that fires, fails or errs by amount. */
const RULE_SET = rules(`version: 1
rules:
${['payer', 'issuer']
  .flatMap((party) =>
    TESTS.map(
      ([id, test]) => `  - id: ${id}-${party}
    on: { created: "#invoices:Invoice:Invoice", party: ${party} }
    when:
      - ${JSON.stringify(test)}
      - decimal(event.createArgument.amount) > decimal("100")
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [${party}] }]
`,
    ),
  )
  .join('')}`);

const CURRENCIES: unknown[] = ['USD', 'EUR', 'CHF', 'GBP', '', null, 5, { code: 'USD' }, undefined];
const REFERENCES: unknown[] = ['INV-17', 'INV-27', 'INV-1', 'X-17', 'X', '', 17, undefined];
const DUES: unknown[] = ['2025-03-01', '2025-03-02', '2025-02-30', 'soon', 20250301, undefined];
const PAYERS: unknown[] = [PARTIES.payer, PARTIES.auditor, PARTIES.issuer, 7, undefined];
const AMOUNTS: unknown[] = ['10', '5000', 'lots', '100', '4500', '50.00', '-3', 7, undefined];
const WITNESSES: string[][] = [
  [PARTIES.payer],
  [PARTIES.issuer],
  [PARTIES.payer, PARTIES.issuer],
  [PARTIES.auditor],
];

/** Invoices with mixes of these values (a field given as `undefined` is left out). */
function events(): ReturnType<typeof input>[] {
  const out: ReturnType<typeof input>[] = [];
  let n = 0;
  const pick = (xs: readonly unknown[], k: number): unknown => xs[(n * k + (n >> 3)) % xs.length];
  for (; n < 1500; n++) {
    const fields: Record<string, unknown> = { issuer: PARTIES.issuer };
    const values = {
      currency: pick(CURRENCIES, 1),
      reference: pick(REFERENCES, 7),
      due: pick(DUES, 5),
      payer: pick(PAYERS, 3),
      amount: pick(AMOUNTS, 11),
    };
    for (const [k, v] of Object.entries(values)) if (v !== undefined) fields[k] = v;
    const witnessParties = WITNESSES[(n * 13) % WITNESSES.length]!;
    out.push(input({ CreatedEvent: created({ createArgument: fields, witnessParties }) }));
  }
  return out;
}

const WITHOUT_THRESHOLDS = indexRules(RULE_SET, { thresholds: false });
const BY_ID = new Map(RULE_SET.rules.map((r) => [r.id, r]));

/**
 * How many rules a threshold guard skipped on `event`: explained as their first condition false
 * without evaluating it, where the index without thresholds evaluated them (to the same end).
 */
function thresholdsRejecting(
  index: RuleIndex,
  event: ReturnType<typeof input>,
  context: EvaluationContext,
): number {
  const withThem = evaluate(index, event, context).explanations;
  const without = evaluate(WITHOUT_THRESHOLDS, event, context).explanations;
  expect(withThem).toEqual(without);
  return withThem.filter((x, i) => {
    const skip = firstConditionFalse(BY_ID.get(x.ruleId)!);
    return x === skip && without[i] !== skip;
  }).length;
}

describe('rule groups', () => {
  it('group the rules whose guards test one field the same way, per party', () => {
    const index = indexRules(RULE_SET);
    const list = index.byTrigger.get(triggerIndexKey('created', 'Invoice:Invoice'))!;
    const plan = visitPlanOf(index, list);
    const ids = (g: (typeof plan.groups)[number]): string[] =>
      g.members.map((m) => m.entry.rule.id.replace(/-payer$/, ''));
    const groups = plan.groups.filter((g) => g.members[0]!.entry.rule.id.endsWith('-payer'));
    expect(groups.map(ids)).toEqual([
      ['usd', 'eur', 'eur-or-chf', 'gbp'],
      ['inv-1', 'inv-2'],
      ['ends-7', 'ends-1'],
      ['ends-17', 'ends-27'],
      ['due-1', 'due-2'],
      ['payer-is-payer', 'payer-is-payer-too', 'payer-over-50'],
      ['payer-is-auditor', 'payer-is-auditor-too'],
    ]);
    // The same for the issuer's rules: a group is of one party.
    expect(plan.groups).toHaveLength(14);
    // x-1 (another prefix length), has-17 (contains) and the thresholds are asked one by one.
    const single = plan.items.filter((i) => i.rule !== null).map((i) => i.rule!.entry.rule.id);
    const alone = [
      'x-1',
      'has-17',
      'over-100',
      'from-5000',
      'from-100',
      'double-over-9000',
      'double-over-100',
      'under-5000',
      'up-to-10',
      'below-100',
    ];
    expect(single).toEqual([
      ...alone.map((id) => `${id}-payer`),
      ...alone.map((id) => `${id}-issuer`),
    ]);
    // Thresholds of one subexpression compared the same way share a family, sorted.
    const families = new Map<string, string[]>();
    for (const { entry } of plan.items.flatMap((i) => (i.rule === null ? [] : [i.rule]))) {
      for (const guard of entry.guards) {
        const expected = guard.expected;
        if (expected.kind !== 'threshold' || !entry.rule.id.endsWith('-payer')) continue;
        for (const { family, rank } of checksOf(expected)) {
          const key = `${family.op} ${family.literals.map(String).join(' ')}`;
          families.set(key, [...(families.get(key) ?? []), `${entry.rule.id}@${rank}`]);
        }
      }
    }
    expect(Object.fromEntries(families)).toEqual({
      '> 100': ['over-100-payer@0'],
      '>= 100 5000': ['from-5000-payer@1', 'from-100-payer@0'],
      // With the 50 of payer-over-50 (in the payer group): the family is the index's.
      '> 50 100 9000': ['double-over-9000-payer@2', 'double-over-100-payer@1'],
      // Written with the literal on the left: compared in that order.
      '< 5000': ['under-5000-payer@0'],
      '<= 10': ['up-to-10-payer@0'],
      '< 100': ['below-100-payer@0'],
    });
  });

  it('give the intents, errors and counters of the rules evaluated one by one', () => {
    const grouped = indexRules(RULE_SET);
    const ungrouped = indexRules(RULE_SET, { groups: false });
    const plain = indexRules(RULE_SET, { guards: false });
    const inGroups = new BotMetrics();
    const oneByOne = new BotMetrics();
    const byCall = new BotMetrics();
    // Without the auditor, `== parties.auditor` decides nothing: those rules are evaluated.
    const contexts = [
      CONTEXT,
      { ...CONTEXT, parties: { payer: PARTIES.payer, issuer: PARTIES.issuer } },
    ];
    let hits = 0;
    let skipped = 0;
    events().forEach((event, i) => {
      const context = contexts[i % 2]!;
      const counts = inGroups.matchCountsFor(grouped);
      const before = counts.total;
      const a = evaluate(grouped, event, context, { matchCounts: counts });
      const b = evaluate(ungrouped, event, context, {
        matchCounts: oneByOne.matchCountsFor(ungrouped),
      });
      let calls = 0;
      const c = evaluate(plain, event, context, {
        countMatch: (ruleId, conditionFalse) => {
          calls += 1;
          byCall.countMatch(ruleId, conditionFalse);
        },
      });
      expect(a.intents).toEqual(c.intents);
      expect(a.errors).toEqual(c.errors);
      expect(b.intents).toEqual(c.intents);
      expect(b.errors).toEqual(c.errors);
      const matched = counts.matched.reduce((x, y) => x + y, 0);
      settleMatchCounts(counts);
      // A group's count reaches its rules' counters when read.
      hits += counts.matched.reduce((x, y) => x + y, 0) - matched;
      expect(counts.total - before).toBe(calls);
      skipped += thresholdsRejecting(grouped, event, context);
    });
    expect(hits).toBeGreaterThan(1000);
    expect(skipped).toBeGreaterThan(1000);
    const snapshot = (m: BotMetrics): string => JSON.stringify(m.snapshot().rules);
    expect(snapshot(inGroups)).toBe(snapshot(byCall));
    expect(snapshot(oneByOne)).toBe(snapshot(byCall));
    const counted = Object.values(inGroups.snapshot().rules);
    expect(counted.reduce((a, r) => a + r.matched, 0)).toBe(inGroups.matchCountsFor(grouped).total);
  });
});
