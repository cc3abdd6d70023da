import { Environment } from '@marcbachmann/cel-js';
import { describe, expect, it } from 'vitest';
import { CelEnvironment } from '../../src/rules/cel/cel-environment.js';
import { leadingEqualities } from '../../src/rules/cel/leading-equalities.js';
import { leadingThresholds } from '../../src/rules/cel/leading-thresholds.js';
import type { RuleSet } from '../../src/rules/compiled-rule.js';
import { evaluate } from '../../src/rules/evaluate.js';
import { firstConditionFalse } from '../../src/rules/fire-rule.js';
import { formatExplanation } from '../../src/rules/format-explanation.js';
import { loadRules } from '../../src/rules/load-rules.js';
import { indexRules } from '../../src/rules/rule-index.js';
import { NOT_AS_ON_THE_WIRE, eventVariableOf } from '../../src/rules/event-variable.js';
import { CONTEXT, PARTIES, archived, created, exercised, input, tx } from './rule-fixtures.js';

const RULES = `
version: 1
rules:
  - id: usd
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when:
      - event.createArgument.currency == "USD"
      - decimal(event.createArgument.amount) < decimal("1000")
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [payer] }]
  - id: eur-or-chf
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: event.createArgument.currency in ["EUR", "CHF"] && decimal(event.createArgument.amount) > 1
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [payer] }]
  - id: gbp-on-the-right
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: '"GBP" == event.createArgument.currency'
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [payer] }]
  - id: error-before-the-guard
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: decimal(event.createArgument.amount) > 1 && event.createArgument.currency == "JPY"
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [payer] }]
  - id: guard-in-second-condition
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when:
      - decimal(event.createArgument.amount) > 0
      - event.createArgument.currency == "USD"
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [payer] }]
  - id: payer-is-us
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: event.createArgument.payer == parties.payer && event.createArgument.region.code == "EU"
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [payer] }]
  - id: payer-is-auditor
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: event.createArgument.payer == parties.auditor
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [payer] }]
  - id: reference-tests
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: event.createArgument.reference.startsWith("INV-") && event.createArgument.reference.endsWith("7") && event.createArgument.reference.contains("-1")
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [payer] }]
  - id: due-on
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: date(event.createArgument.due) == date("2025-03-01")
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [payer] }]
  - id: or-is-no-guard
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: event.createArgument.currency == "USD" || event.createArgument.currency == "EUR"
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [payer] }]
`;

function load(cel?: CelEnvironment): RuleSet {
  const { ruleSet, problems } = loadRules([{ path: 'guards.yaml', text: RULES }], {
    parties: PARTIES,
    ...(cel === undefined ? {} : { cel }),
  });
  expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
  return ruleSet;
}

const RULE_SET = load();
const INDEX = indexRules(RULE_SET);
/** The same rules evaluated as written: no folding, no memo, no guards. */
const PLAIN = indexRules(
  load(CelEnvironment.create({ foldLiterals: false, memoizeConversions: false })),
  { guards: false },
);

const CURRENCIES: unknown[] = ['USD', 'EUR', 'CHF', 'GBP', 'JPY', '', null, 5, { code: 'USD' }];
const AMOUNTS: unknown[] = ['10', '5000', 'lots', 3];
const PAYERS: unknown[] = [PARTIES.payer, PARTIES.issuer, 7];
const REGIONS: unknown[] = [{ code: 'EU' }, { code: 'US' }, 'EU', null];
const REFERENCES: unknown[] = ['INV-17', 'INV-27', 'INV-1', 'X-17', 17, undefined];
const DUES: unknown[] = ['2025-03-01', '2025-03-02', '2025-02-30', '2025-3-1', 20250301, undefined];

/** Invoices with every mix of these fields; a field given as `undefined` is left out. */
function invoices(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const currency of [...CURRENCIES, undefined]) {
    for (const amount of AMOUNTS) {
      for (const payer of PAYERS) {
        for (const region of [...REGIONS, undefined]) {
          const fields: Record<string, unknown> = { issuer: PARTIES.issuer };
          const reference = REFERENCES[out.length % REFERENCES.length];
          if (reference !== undefined) fields.reference = reference;
          const due = DUES[Math.floor(out.length / REFERENCES.length) % DUES.length];
          if (due !== undefined) fields.due = due;
          if (currency !== undefined) fields.currency = currency;
          fields.amount = amount;
          fields.payer = payer;
          if (region !== undefined) fields.region = region;
          out.push(fields);
        }
      }
    }
  }
  return out;
}

const eventOf = (createArgument: Record<string, unknown>) =>
  input({ CreatedEvent: created({ createArgument }) });

describe('rule guards (leading equalities of the first condition)', () => {
  it('finds the equalities of the top-level && chain only', () => {
    const env = new Environment()
      .registerVariable('event', 'dyn')
      .registerVariable('parties', 'dyn');
    const of = (source: string) => leadingEqualities(env.parse(source).ast);
    expect(of('event.a == "x" && (event.b == "y" || true) && !(event.c == "z")')).toEqual([
      { variable: 'event', fields: ['a'], expected: { kind: 'text', values: ['x'] } },
    ]);
    expect(of('event["a"] == "x" && event.a == 1 && event.a in ["x", 1]')).toEqual([]);
    expect(of('parties.payer == parties.issuer')).toEqual([]);
    expect(
      of('date("2025-01-31") == date(event.d) && date(event.e) == date("2025-02-30")'),
    ).toEqual([
      { variable: 'event', fields: ['d'], expected: { kind: 'date', text: '2025-01-31' } },
    ]);
    expect(
      of('event.a.endsWith("x") && event.b.startsWith(event.a) && parties.p.contains("x")'),
    ).toEqual([{ variable: 'event', fields: ['a'], expected: { kind: 'endsWith', text: 'x' } }]);
    // The comparisons with a literal (threshold-guards.ts) have a test of their own.
    const equalitiesOf = (r: (typeof INDEX.rules)[number]) =>
      r.guards.filter((g) => g.expected.kind !== 'threshold');
    const guards = Object.fromEntries(
      INDEX.rules.map((r) => [
        r.rule.id,
        equalitiesOf(r).map(({ id: _id, readId: _readId, onWire: _onWire, ...guard }) => guard),
      ]),
    );
    // Guards of the same fields share the slot of their per-event read, and only they.
    const readIds = new Map<string, number>();
    for (const rule of INDEX.rules) {
      for (const g of equalitiesOf(rule)) {
        expect(g.readId).toBe(readIds.get(g.key) ?? g.readId);
        readIds.set(g.key, g.readId);
      }
    }
    expect(new Set(readIds.values()).size).toBe(readIds.size);
    expect(readIds.size).toBeGreaterThan(2);
    expect(guards).toEqual({
      usd: [
        {
          key: 'createArgument.currency',
          fields: ['createArgument', 'currency'],
          expected: { kind: 'text', values: ['USD'] },
        },
      ],
      'eur-or-chf': [
        {
          key: 'createArgument.currency',
          fields: ['createArgument', 'currency'],
          expected: { kind: 'text', values: ['EUR', 'CHF'] },
        },
      ],
      'gbp-on-the-right': [
        {
          key: 'createArgument.currency',
          fields: ['createArgument', 'currency'],
          expected: { kind: 'text', values: ['GBP'] },
        },
      ],
      'error-before-the-guard': [
        {
          key: 'createArgument.currency',
          fields: ['createArgument', 'currency'],
          expected: { kind: 'text', values: ['JPY'] },
        },
      ],
      'guard-in-second-condition': [],
      'payer-is-us': [
        {
          key: 'createArgument.payer',
          fields: ['createArgument', 'payer'],
          expected: { kind: 'party', alias: 'payer' },
        },
        {
          key: 'createArgument.region.code',
          fields: ['createArgument', 'region', 'code'],
          expected: { kind: 'text', values: ['EU'] },
        },
      ],
      'payer-is-auditor': [
        {
          key: 'createArgument.payer',
          fields: ['createArgument', 'payer'],
          expected: { kind: 'party', alias: 'auditor' },
        },
      ],
      'reference-tests': [
        {
          key: 'createArgument.reference',
          fields: ['createArgument', 'reference'],
          expected: { kind: 'startsWith', text: 'INV-' },
        },
        {
          key: 'createArgument.reference',
          fields: ['createArgument', 'reference'],
          expected: { kind: 'endsWith', text: '7' },
        },
        {
          key: 'createArgument.reference',
          fields: ['createArgument', 'reference'],
          expected: { kind: 'contains', text: '-1' },
        },
      ],
      'due-on': [
        {
          key: 'createArgument.due',
          fields: ['createArgument', 'due'],
          expected: { kind: 'date', text: '2025-03-01' },
        },
      ],
      'or-is-no-guard': [],
    });
  });

  it('finds the comparisons of an event-only subexpression with a literal in the && chain only', () => {
    const env = new Environment()
      .registerVariable('event', 'dyn')
      .registerVariable('parties', 'dyn')
      .registerVariable('rule', 'dyn');
    const of = (source: string) =>
      leadingThresholds(env.parse(source).ast).map((t) => [
        t.key,
        t.op,
        t.flipped,
        t.literal.type,
        t.literal.value instanceof Date ? t.literal.value.toISOString() : String(t.literal.value),
      ]);
    expect(of('decimal(event.a) * 2 > decimal("10") && event.b == "x"')).toEqual([
      ['(decimal(event."a")*2n)', '>', false, 'decimal', '10'],
    ]);
    // The literal on the left: the comparison turned round, and done in the written order.
    expect(of('10 >= event.n && (event.m < 3 && true)')).toEqual([
      ['event."n"', '<=', true, 'int', '10'],
      ['event."m"', '<', false, 'int', '3'],
    ]);
    expect(of('date(event.d) <= date("2026-01-31")')).toEqual([
      ['date(event."d")', '<=', false, 'timestamp', '2026-01-31T00:00:00.000Z'],
    ]);
    for (const none of [
      'event.a > 1 || event.b > 2',
      '!(event.a > 1)',
      'event.a > parties.x',
      'parties.x > 1',
      'rule.revision > 1',
      'decimal(event.a) * rule.revision > 1',
      'event.view.amount > 1',
      'event.a > 2.5',
      'event.a > "x"',
      'event.a > event.b',
      'event["a"] > 1',
      'event.a == 1',
      'decimal(event.a) > decimal("x")',
    ]) {
      expect(of(none), none).toEqual([]);
    }
  });

  it('gives equal guards one id, so an event asks each once', () => {
    const ids = INDEX.rules.flatMap((r) =>
      r.guards.filter((g) => g.expected.kind !== 'threshold').map((g) => g.id),
    );
    // Every equality of RULES differs from the others.
    expect(new Set(ids).size).toBe(ids.length);
    const twice = indexRules(
      loadRules(
        [
          {
            path: 'r.yaml',
            text: `${RULES}${RULES.split('rules:\n')[1]!.replaceAll('- id: ', '- id: again-')}`,
          },
        ],
        {
          parties: PARTIES,
        },
      ).ruleSet,
    );
    const byRule = new Map(twice.rules.map((r) => [r.rule.id, r.guards.map((g) => g.id)]));
    expect(byRule.get('again-usd')).toEqual(byRule.get('usd'));
    expect(byRule.get('again-payer-is-us')).toEqual(byRule.get('payer-is-us'));
    expect(byRule.get('payer-is-auditor')).not.toEqual(byRule.get('payer-is-us')!.slice(0, 1));
  });

  it('know every top-level field where the CEL variable differs from the wire event', () => {
    for (const event of [created(), exercised(), archived()]) {
      const wire = event as unknown as Record<string, unknown>;
      const variable = eventVariableOf(event, tx(), null);
      const differ = Object.keys(variable).filter((k) => variable[k] !== wire[k]);
      expect(differ.length).toBeGreaterThan(3);
      expect(differ.filter((k) => !NOT_AS_ON_THE_WIRE.has(k))).toEqual([]);
    }
  });

  it('read the CEL variable, not the wire event, where the two differ (typed or added fields)', () => {
    const text = `version: 1
rules:
${['createdAt', 'workflowId', 'updateId', 'recordTime', 'contractId']
  .map(
    (field) => `  - id: on-${field.toLowerCase()}
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: event.${field} == "2025-03-03T08:00:00.123456Z"
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [payer] }]
`,
  )
  .join('')}`;
    const { ruleSet, problems } = loadRules([{ path: 'wire.yaml', text }], { parties: PARTIES });
    expect(problems).toEqual([]);
    const guarded = indexRules(ruleSet);
    expect(guarded.rules.map((r) => r.guards.map((g) => g.onWire))).toEqual([
      [false],
      [false],
      [false],
      [false],
      [true],
    ]);
    const plain = indexRules(ruleSet, { guards: false });
    for (const event of [
      input({ CreatedEvent: created() }),
      input({ CreatedEvent: created({ contractId: '' }) }, { workflowId: '' }),
      input({ CreatedEvent: created() }, { workflowId: '2025-03-03T08:00:00.123456Z' }),
    ]) {
      const counts: string[] = [];
      const fast = evaluate(guarded, event, CONTEXT, {
        countMatch: (id, conditionFalse) => counts.push(`${id} ${conditionFalse}`),
      });
      const asWritten = evaluate(plain, event, CONTEXT);
      expect(fast.intents).toEqual(asWritten.intents);
      expect(counts).toEqual(
        asWritten.explanations.map(
          (x) => `${x.ruleId} ${x.conditions.some((c) => c.outcome === 'false')}`,
        ),
      );
      expect(evaluate(guarded, event, CONTEXT)).toEqual(asWritten);
    }
  });

  it('gives the same intents, explanations and errors as evaluating every rule as written', () => {
    const contexts = [CONTEXT, { ...CONTEXT, parties: { payer: PARTIES.payer } }];
    let skipped = 0;
    for (const context of contexts) {
      for (const fields of invoices()) {
        const event = eventOf(fields);
        const fast = evaluate(INDEX, event, context);
        expect(fast).toEqual(evaluate(PLAIN, event, context));
        skipped += fast.explanations.filter(
          (e, i) => e === firstConditionFalse(RULE_SET.rules[i]!),
        ).length;
      }
    }
    expect(skipped).toBeGreaterThan(0);
  });

  it('skips a rule exactly when a guarded field holds text the equality rejects', () => {
    const rule = (id: string) => RULE_SET.rules.find((r) => r.id === id)!;
    const skippedOn = (id: string, fields: Record<string, unknown>): boolean => {
      const r = evaluate(INDEX, eventOf(fields), CONTEXT);
      const at = RULE_SET.rules.indexOf(rule(id));
      return r.explanations[at] === firstConditionFalse(rule(id));
    };
    const base = { amount: '10', payer: PARTIES.payer, region: { code: 'EU' } };
    expect(skippedOn('usd', { ...base, currency: 'EUR' })).toBe(true);
    expect(skippedOn('usd', { ...base, currency: 'USD' })).toBe(false);
    // Not text: evaluated, so that whatever CEL says (false, or an error) is what is reported.
    expect(skippedOn('usd', { ...base, currency: 5 })).toBe(false);
    expect(skippedOn('usd', { ...base, currency: null })).toBe(false);
    expect(skippedOn('usd', { ...base })).toBe(false);
    expect(skippedOn('eur-or-chf', { ...base, currency: 'CHF' })).toBe(false);
    expect(skippedOn('eur-or-chf', { ...base, currency: 'USD' })).toBe(true);
    // An operand before the guard that fails does not matter: `&&` is false either way.
    expect(skippedOn('error-before-the-guard', { ...base, amount: 'lots', currency: 'EUR' })).toBe(
      true,
    );
    expect(skippedOn('guard-in-second-condition', { ...base, currency: 'EUR' })).toBe(false);
    expect(skippedOn('or-is-no-guard', { ...base, currency: 'GBP' })).toBe(false);
    expect(skippedOn('payer-is-us', { ...base, payer: PARTIES.issuer })).toBe(true);
    expect(skippedOn('payer-is-us', { ...base, region: { code: 'US' } })).toBe(true);
    expect(skippedOn('payer-is-us', { ...base, region: 'EU' })).toBe(false);
    expect(skippedOn('payer-is-us', { ...base })).toBe(false);
    expect(skippedOn('reference-tests', { ...base, reference: 'INV-17' })).toBe(false);
    for (const reference of ['X-17', 'INV-18', 'INV-27']) {
      expect(skippedOn('reference-tests', { ...base, reference })).toBe(true);
    }
    expect(skippedOn('reference-tests', { ...base, reference: 17 })).toBe(false);
    expect(skippedOn('due-on', { ...base, due: '2025-03-02' })).toBe(true);
    // The same day, or text that date() fails on: evaluated (true, or the error).
    for (const due of ['2025-03-01', '2025-02-30', '2025-3-1', 20250301]) {
      expect(skippedOn('due-on', { ...base, due })).toBe(false);
    }
  });

  it('still reports the error of a rule whose guard cannot decide', () => {
    const parties = { payer: PARTIES.payer };
    const r = evaluate(INDEX, eventOf({ payer: PARTIES.issuer }), { ...CONTEXT, parties });
    expect(r.errors.map((e) => [e.ruleId, e.code])).toContainEqual([
      'payer-is-auditor',
      'CEL_EVALUATION_ERROR',
    ]);
  });

  it('explains a skipped rule as its first condition false', () => {
    const fields = { currency: 'EUR', amount: '10', payer: PARTIES.payer };
    const r = evaluate(INDEX, eventOf(fields), CONTEXT);
    expect(formatExplanation(r.explanations[0]!)).toEqual([
      'usd (guards.yaml:4:5): not fired',
      '  when[0] event.createArgument.currency == "USD" → false',
      '  when[1] decimal(event.createArgument.amount) < decimal("1000") → skipped',
    ]);
    expect(r.explanations[0]).toEqual(evaluate(PLAIN, eventOf(fields), CONTEXT).explanations[0]);
  });
});
