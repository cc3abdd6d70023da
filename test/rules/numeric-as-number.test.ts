import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/rules/evaluate.js';
import { loadRules } from '../../src/rules/load-rules.js';
import type { PackageCatalogue } from '../../src/daml-lf/package-catalogue.js';
import { INVOICES, modelCatalogue } from './invoices-catalogue.js';
import { CONTEXT, created, input, PARTIES, rules } from './rule-fixtures.js';

const RULE = (when: string, template = '#invoices:Invoice:Invoice'): string => `version: 1
rules:
  - id: big
    on: { created: '${template}', party: payer }
    when: '${when}'
    then:
      - exercise: { template: '${template}', contractId: '\${{ event.contractId }}', choice: Accept }
        actAs: [payer]
`;

describe('a Numeric field compared as a number', () => {
  it('the rule error says to use decimal(…) (and int(…) for an Int64)', () => {
    for (const when of [
      'event.createArgument.amount >= 1000',
      '1000 < event.createArgument.amount',
      'event.createArgument.amount * 2 > 5',
      'event.createArgument.amount > 10.5',
    ]) {
      const r = evaluate(
        rules(RULE(when)),
        input({ CreatedEvent: created({ createArgument: { amount: '1000.0000000000' } }) }),
        CONTEXT,
      );
      expect(r.errors).toHaveLength(1);
      expect(r.errors[0]!.message).toContain('no such overload');
      expect(r.errors[0]!.message).toContain('Daml Numeric and Int64 values are text');
      expect(r.errors[0]!.message).toContain(
        'decimal(event.createArgument.amount) >= decimal("1000")',
      );
      expect(r.errors[0]!.message).toContain('int(…) for an Int64');
    }
  });

  it('other overload errors get no such hint', () => {
    const r = evaluate(
      rules(RULE('event.createArgument.flag > 1')),
      input({ CreatedEvent: created({ createArgument: { flag: true } }) }),
      CONTEXT,
    );
    expect(r.errors[0]!.message).not.toContain('Daml Numeric');
  });
});

const MODEL = `package: { name: shop, version: 1.0.0 }
templates:
  Shop:Order:
    fields:
      buyer: Party
      total: Numeric 2
      count: Int64
      note: Optional Text
      item: { qty: Int64, price: Optional (Numeric 2) }
      counts: List Int64
    signatories: [buyer]
    choices:
      Accept: { controllers: [buyer] }
`;

const SHOP = modelCatalogue({ 'shop.yaml': MODEL });

function problems(when: string, packages?: PackageCatalogue, template = '#shop:Shop:Order') {
  return loadRules([{ path: 'r.yaml', text: RULE(when, template) }], {
    parties: PARTIES,
    ...(packages === undefined ? {} : { packages }),
  }).problems.map((p) => ({ col: p.col, code: p.code, message: p.message, hint: p.hint }));
}

describe('validate --model flags Numeric and Int64 fields used as numbers', () => {
  it('at the field, with the decimal(…) form to write', () => {
    // `    when: '` is 11 characters, `event.createArgument.` 21 more.
    expect(
      problems('event.createArgument.amount >= 1000', INVOICES, '#invoices:Invoice:Invoice'),
    ).toEqual([
      {
        col: 33,
        code: 'NUMERIC_AS_NUMBER',
        message:
          'field "amount" is a Daml Numeric, which arrives as text, so `>=` with a number fails on every event ("no such overload")',
        hint: 'compare it as a decimal: decimal(event.createArgument.amount) >= decimal("…")',
      },
    ]);
  });

  it('an Int64 gets int(…); == is always false; lists and Optionals are followed', () => {
    const [count] = problems('event.createArgument.count == 3', SHOP);
    expect(count?.code).toBe('NUMERIC_AS_NUMBER');
    expect(count?.message).toContain(
      'Daml Int64, which arrives as text, so `==` with a number is always false',
    );
    expect(count?.hint).toBe(
      'convert it: int(event.createArgument.count) == …, or decimal(event.createArgument.count) == decimal("…")',
    );
    expect(
      problems(
        'event.createArgument.item.price > 5 || 1 < event.createArgument.item.qty || event.createArgument.counts.exists(c, c > 5)',
        SHOP,
      ).map((p) => p.message.slice(0, 30)),
    ).toEqual([
      'field "price" is a Daml Numeri',
      'field "qty" is a Daml Int64, w',
      'an item of field "counts" is a',
    ]);
  });

  it('leaves alone what is right or unknown', () => {
    for (const when of [
      'decimal(event.createArgument.total) >= decimal("1000")',
      'int(event.createArgument.count) > 3',
      'event.createArgument.total == "10.00"',
      'event.createArgument.note == null',
      'size(event.createArgument.counts) > 2',
      'event.offset > 5',
    ]) {
      expect(problems(when, SHOP)).toEqual([]);
    }
    // Without a model the types are unknown: only the run time can tell.
    expect(problems('event.createArgument.total >= 1000')).toEqual([]);
  });
});
