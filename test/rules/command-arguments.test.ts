import { describe, expect, it } from 'vitest';
import { actionRule, shopProblems } from './typed-catalogue.js';

/** A create of Shop:Order whose createArguments are `args` (a YAML flow mapping), at line 6. */
function create(args: string): string[] {
  return shopProblems(
    actionRule(`      - create: { template: '#shop:Shop:Order', createArguments: ${args} }`),
  );
}

const VALID = `{ buyer: '\${{ parties.payer }}', amount: 12.5, count: 3, due: 2025-01-31, at: '2025-01-31T09:00:00.123456Z', paid: true, status: Open, payment: { tag: Cash, value: '1.50' }, pair: { fst: '7', snd: x }, scaled: { value: '1.25' }, lines: [{ sku: a, qty: 1 }], tags: { red: 1 }, book: [[k, 2]], maybe: [[]], nothing: {} }`;

/** VALID with one field replaced (or added). */
const withField = (field: string, value: string) =>
  VALID.replace(
    new RegExp(`${field}: (\\{[^}]*\\}|\\[[^\\]]*\\]\\]?|'[^']*'|[^,]*)(?=,| \\})`),
    `${field}: ${value}`,
  );

describe('command arguments against the Daml types', () => {
  it('accepts a value of every kind written as the JSON API reads it', () => {
    expect(create(VALID)).toEqual([]);
  });

  it('unknown and missing record fields', () => {
    expect(create(`{ buyer: '\${{ parties.payer }}', amont: 1 }`)).toEqual([
      'MISSING_FIELD 6:66 Order needs "amount" (Numeric 10), "count" (Int), "due" (Date), "at" (Time), "paid" (Bool), "status" (Status), "payment" (Payment), "pair" (Pair Int Text), "scaled" (Scaled 2), "lines" ([Line]), "tags" (TextMap Int), "book" (Map Text Int), "maybe" (Optional (Optional Int)), "nothing" (()) (only Optional fields may be left out (they are None); a nested Optional is written [] for None)',
      'UNKNOWN_FIELD 6:99 Order has no field "amont" (did you mean "amount"?)',
    ]);
  });

  it('a value of the wrong shape', () => {
    expect(create(withField('pair', '[1, 2]'))).toEqual([
      expect.stringMatching(
        /^BAD_ARGUMENT 6:\d+ expected a Pair Int Text record \(a mapping of its fields\), got a list$/,
      ),
    ]);
    expect(create(withField('paid', 'yes'))).toEqual([
      expect.stringMatching(
        /^BAD_ARGUMENT 6:\d+ expected a Bool \(true or false\), got the text "yes"$/,
      ),
    ]);
    expect(create(withField('lines', '{ sku: a }'))).toEqual([
      expect.stringMatching(/^BAD_ARGUMENT 6:\d+ expected a list \(\[Line\]\), got a mapping$/),
    ]);
    expect(create(withField('book', '{ k: 2 }'))).toEqual([
      expect.stringMatching(
        /^BAD_ARGUMENT 6:\d+ expected a Map \(a list of \[key, value\] pairs\), got a mapping$/,
      ),
    ]);
    expect(create(withField('nothing', '1'))).toEqual([
      expect.stringMatching(/^BAD_ARGUMENT 6:\d+ expected Unit \(\{\}\), got the number 1$/),
    ]);
  });

  it('enums and variants', () => {
    expect(create(withField('status', 'Opn'))).toEqual([
      expect.stringMatching(
        /^BAD_ARGUMENT 6:\d+ Status has no constructor "Opn" \(did you mean "Open"\?\)$/,
      ),
    ]);
    expect(create(withField('payment', '{ tag: Cassh, value: 1 }'))).toEqual([
      expect.stringMatching(
        /^BAD_ARGUMENT 6:\d+ Payment has no constructor "Cassh" \(did you mean "Cash"\?\)$/,
      ),
    ]);
    expect(create(withField('payment', 'Cash'))).toEqual([
      expect.stringMatching(
        /^BAD_ARGUMENT 6:\d+ expected a Payment variant \(\{tag: Constructor, value: …\}\), got the text "Cash" \(write \{tag: Cash, value: …\}\)$/,
      ),
    ]);
    expect(
      create(withField('payment', '{ tag: Card, value: { number: "1", expires: 2025-13-01 } }')),
    ).toEqual([
      expect.stringMatching(
        /^BAD_LITERAL 6:\d+ "2025-13-01" is not a Date \(write yyyy-mm-dd, e.g. 2025-01-31\)$/,
      ),
    ]);
  });

  it('Numeric, Int, Date and Time literals: format and scale', () => {
    expect(create(withField('amount', '1.12345678901'))).toEqual([
      expect.stringMatching(
        /^BAD_LITERAL 6:\d+ "1.12345678901" has 11 digits after the point; a Numeric 10 has at most 10 \(round it to 10 decimal places\)$/,
      ),
    ]);
    // The scale of a generic record comes from its type argument: Scaled 2.
    expect(create(withField('scaled', "{ value: '1.234' }"))).toEqual([
      expect.stringMatching(
        /^BAD_LITERAL 6:\d+ "1.234" has 3 digits after the point; a Numeric 2 has at most 2/,
      ),
    ]);
    expect(create(withField('count', '1.5'))).toEqual([
      expect.stringMatching(/^BAD_LITERAL 6:\d+ "1.5" is not an Int \(a whole number\)/),
    ]);
    expect(create(withField('count', "'99999999999999999999'"))).toEqual([
      expect.stringMatching(/does not fit an Int \(64 bits\)/),
    ]);
    expect(create(withField('due', "'2025-01-31T00:00:00Z'"))).toEqual([
      expect.stringMatching(
        /^BAD_LITERAL 6:\d+ "2025-01-31T00:00:00Z" is not a Date \(a Date is the day alone: yyyy-mm-dd, e.g. 2025-01-31\)$/,
      ),
    ]);
    expect(create(withField('at', '2025-01-31'))).toEqual([
      expect.stringMatching(
        /^BAD_LITERAL 6:\d+ "2025-01-31" is not a Time \(write an ISO 8601 time with seconds and a zone, e.g. 2025-01-31T09:00:00Z\)$/,
      ),
    ]);
    expect(create(withField('amount', "'1e3'"))).toEqual([
      expect.stringMatching(/"1e3" is not a Numeric 10 \(write a decimal number without exponent/),
    ]);
  });

  it('Optionals: nested ones are lists at every level, and may not be null', () => {
    expect(create(withField('maybe', "[['5']]"))).toEqual([]);
    expect(create(withField('maybe', "['5']"))).toEqual([
      expect.stringMatching(
        /^BAD_ARGUMENT 6:\d+ expected an Optional Int \(a list: \[\] for None, \[x\] for Some x\), got the text "5"/,
      ),
    ]);
    expect(create(withField('maybe', 'null'))).toEqual([
      expect.stringMatching(
        /^BAD_ARGUMENT 6:\d+ expected an Optional \(Optional Int\) .*null is not accepted\)$/,
      ),
    ]);
    expect(create(`${VALID.slice(0, -2)}, note: null, terms: { days: '2' } }`)).toEqual([]);
  });

  it('a party alias where a party id belongs', () => {
    expect(create(withField('buyer', 'payer'))).toEqual([
      expect.stringMatching(
        /^BAD_LITERAL 6:\d+ "payer" is a party alias; a command needs the party's id \(write '\$\{\{ parties.payer \}\}'\)$/,
      ),
    ]);
  });
});

describe('${{ }} values against the field type', () => {
  it('reports what the expression gives where it cannot be the field', () => {
    // A timestamp is sent as its day (typed-values-sent.test.ts); Daml Time text is not.
    expect(create(withField('due', "'${{ event.createArgument.at }}'"))).toEqual([
      expect.stringMatching(
        /^TYPE_MISMATCH 6:\d+ the expression gives a Daml Time, and the field is a Date \(text\) \(a Time is text such as 2025-01-31T09:00:00Z, which a Date does not read: convert it/,
      ),
    ]);
    expect(create(withField('count', "'${{ event.createArgument.amount }}'"))).toEqual([
      expect.stringMatching(
        /^TYPE_MISMATCH 6:\d+ the expression gives a Daml Numeric 10, and the field is a Int \(text\) \(a Numeric is text with its decimals/,
      ),
    ]);
    expect(create(withField('paid', "'${{ event.createArgument.status }}'"))).toEqual([
      expect.stringMatching(
        /^TYPE_MISMATCH 6:\d+ the expression gives a Daml Status, and the field is a Bool/,
      ),
    ]);
    expect(create(withField('pair', "'${{ event.createArgument.lines }}'"))).toEqual([
      expect.stringMatching(
        /^TYPE_MISMATCH 6:\d+ the expression gives a Daml \[Line\], and the field is a Pair Int Text record/,
      ),
    ]);
  });

  it('accepts what renders right', () => {
    expect(
      create(
        VALID.replace('amount: 12.5', "amount: '${{ decimal(event.createArgument.amount) * 2 }}'")
          .replace('count: 3', "count: '${{ size(event.createArgument.lines) }}'")
          .replace('due: 2025-01-31', "due: '${{ today }}'")
          .replace("at: '2025-01-31T09:00:00.123456Z'", "at: '${{ now }}'")
          .replace('paid: true', "paid: '${{ event.createArgument.paid }}'")
          .replace('lines: [{ sku: a, qty: 1 }]', "lines: '${{ event.createArgument.lines }}'")
          .replace('pair: { fst: ', "pair: { snd: 'n ${{ event.createArgument.count }}', fst: ")
          .replace(', snd: x }', ' }'),
      ),
    ).toEqual([]);
  });
});

describe('choice arguments and contract keys', () => {
  const exercise = (choiceArgument: string) =>
    shopProblems(
      actionRule(
        `      - exercise: { template: '#shop:Shop:Order', contractId: '\${{ event.contractId }}', choice: Ship${choiceArgument} }`,
      ),
    );

  it('a choice argument left out is reported at the choice', () => {
    expect(exercise('')).toEqual([
      'MISSING_FIELD 6:98 Ship needs "carrier" (Text), "on" (Date), "priority" (Status) (only Optional fields may be left out (they are None); a nested Optional is written [] for None)',
    ]);
    expect(exercise(', choiceArgument: { carrier: x, on: 2025-01-01, priority: Shiped }')).toEqual([
      expect.stringMatching(
        /^BAD_ARGUMENT 6:\d+ Status has no constructor "Shiped" \(did you mean "Shipped"\?\)$/,
      ),
    ]);
  });

  it('a contract key of exerciseByKey', () => {
    const text = actionRule(
      `      - exerciseByKey: { template: '#shop:Shop:Order', contractKey: { buyer: '\${{ parties.payer }}', reff: x }, choice: Archive }`,
    );
    expect(shopProblems(text)).toEqual([
      'MISSING_FIELD 6:69 OrderKey needs "ref" (Text) (only Optional fields may be left out (they are None); a nested Optional is written [] for None)',
      'UNKNOWN_FIELD 6:102 OrderKey has no field "reff" (did you mean "ref"?)',
    ]);
  });
});
