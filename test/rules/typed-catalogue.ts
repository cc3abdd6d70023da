import { PackageCatalogue } from '../../src/daml-lf/package-catalogue.js';
import { loadRules } from '../../src/rules/load-rules.js';
import { PARTIES } from './rule-fixtures.js';
import { con, pkg, T } from './signature-builder.js';

/**
 * One template with a field of every kind the checks know: Numeric, Int64, Date, Time,
 * Optional, a record, an enum, a variant, a generic record (`Pair Int Text`), lists, a TextMap,
 * a GenMap, a nested Optional; a choice with an argument record and a key.
 */
export const SHOP = pkg('shop', '1.0.0', {
  'Shop:Order': {
    template: {
      buyer: T.party,
      amount: T.numeric(10),
      count: T.int,
      due: T.date,
      at: T.time,
      paid: T.bool,
      note: T.opt(T.text),
      terms: T.opt(con('Shop:Terms')),
      status: con('Shop:Status'),
      payment: con('Shop:Payment'),
      pair: con('Shop:Pair', [T.int, T.text]),
      scaled: con('Shop:Scaled', [T.nat(2)]),
      lines: T.list(con('Shop:Line')),
      tags: T.textMap(T.int),
      book: T.genMap(T.text, T.int),
      maybe: T.opt(T.opt(T.int)),
      nothing: T.unit,
    },
    choices: {
      Ship: { argument: { carrier: T.text, on: T.date, priority: con('Shop:Status') } },
      Settle: { argument: { how: con('Shop:Payment'), fee: T.opt(T.numeric(2)) } },
    },
    key: con('Shop:OrderKey'),
  },
  'Shop:Terms': { record: { days: T.int, penalty: T.opt(T.numeric(2)) } },
  'Shop:OrderKey': { record: { buyer: T.party, ref: T.text } },
  'Shop:Status': { enum: ['Open', 'Shipped', 'Closed'] },
  'Shop:Payment': { variant: { Cash: T.numeric(2), Card: con('Shop:Card'), Later: T.unit } },
  'Shop:Card': { record: { number: T.text, expires: T.date } },
  'Shop:Pair': { record: { fst: T.v('a'), snd: T.v('b') }, params: ['a', 'b'] },
  'Shop:Scaled': { record: { value: T.numeric('n') }, params: ['n'] },
  'Shop:Line': { record: { sku: T.text, qty: T.int } },
});

export const SHOP_CATALOGUE = PackageCatalogue.create([SHOP]);

/** The problems of rule file text against SHOP, as `[warning ]CODE line:col message (hint)`. */
export function shopProblems(text: string): string[] {
  return loadRules([{ path: 'r.yaml', text }], {
    parties: PARTIES,
    packages: SHOP_CATALOGUE,
  }).problems.map(
    (p) =>
      `${p.severity === 'warning' ? 'warning ' : ''}${p.code} ${p.line}:${p.col} ${p.message}${p.hint === undefined ? '' : ` (${p.hint})`}`,
  );
}

/** A created rule on Shop:Order with `when` (line 5, the expression at column 12). */
export function whenRule(when: string): string {
  return `version: 1
rules:
  - id: r
    on: { created: '#shop:Shop:Order', party: payer }
    when: '${when}'
    then:
      - exercise: { template: '#shop:Shop:Order', contractId: '\${{ event.contractId }}', choice: Archive }
        actAs: [payer]
`;
}

/** A created rule on Shop:Order whose only action is `action` (YAML lines at indent 6). */
export function actionRule(action: string, when?: string): string {
  return `version: 1
rules:
  - id: r
    on: { created: '#shop:Shop:Order', party: payer }
${when === undefined ? '' : `    when: '${when}'\n`}    then:
${action}
        actAs: [payer]
`;
}
