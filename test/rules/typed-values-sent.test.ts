import { describe, expect, it } from 'vitest';
import { PackageCatalogue } from '../../src/daml-lf/package-catalogue.js';
import { damlDateText, damlTimeText } from '../../src/rules/cel/daml-time-text.js';
import type { DamlRendering } from '../../src/rules/compiled-rule.js';
import { evaluate } from '../../src/rules/evaluate.js';
import { evaluateSlot } from '../../src/rules/evaluate-slot.js';
import type { EvaluationResult } from '../../src/rules/evaluation-result.js';
import { loadRules } from '../../src/rules/load-rules.js';
import { CONTEXT, PARTIES, created, input } from './rule-fixtures.js';
import { con, pkg, T } from './signature-builder.js';
import { SHOP, SHOP_CATALOGUE } from './typed-catalogue.js';

// What a rule sends for a `${{ }}` value, by the Daml type of the field when the packages give
// it: Canton 3.5 refuses a timestamp for a Date (HTTP 500), an Int with a fraction, a Numeric
// with more places than its scale. CONTEXT.now is 2025-03-03T09:30:00Z.

/** Without packages: the types are unknown. */
const NONE = null;

/** Loads one created rule on Shop:Order whose only action is `action` (YAML at indent 6). */
function load(action: string, packages: PackageCatalogue | null = SHOP_CATALOGUE) {
  const text = `version: 1
rules:
  - id: r
    on: { created: '#shop:Shop:Order', party: payer }
    then:
${action}
        actAs: [payer]
`;
  return loadRules([{ path: 'r.yaml', text }], {
    parties: PARTIES,
    ...(packages === null ? {} : { packages }),
  });
}

/** Fires the rule on a created Shop:Order; fails the test when loading reports an error. */
function fire(
  action: string,
  packages: PackageCatalogue | null = SHOP_CATALOGUE,
): EvaluationResult {
  const { ruleSet, problems } = load(action, packages);
  expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
  const event = created({
    templateId: `${SHOP.packageId}:Shop:Order`,
    packageName: 'shop',
    representativePackageId: SHOP.packageId,
    createArgument: { amount: '7.5000000000', at: '2025-01-31T09:00:00.5Z', due: '2025-02-01' },
  });
  return evaluate(ruleSet, input({ CreatedEvent: event }), CONTEXT);
}

/** The choiceArgument an `exercise … choice: Settle|Ship` action sends. */
function sent(
  choice: string,
  argument: string,
  packages: PackageCatalogue | null = SHOP_CATALOGUE,
): unknown {
  const r = fire(exercise(choice, argument), packages);
  expect(r.errors).toEqual([]);
  const command = r.intents[0]!.command as { ExerciseCommand: { choiceArgument: unknown } };
  return command.ExerciseCommand.choiceArgument;
}

function exercise(choice: string, argument: string): string {
  return `      - exercise: { template: '#shop:Shop:Order', contractId: '\${{ event.contractId }}', choice: ${choice}, choiceArgument: ${argument} }`;
}

/** A valid Shop:Order, field by field (YAML flow values). */
const ORDER: Readonly<Record<string, string>> = {
  buyer: "'${{ parties.payer }}'",
  amount: '12.5',
  count: '3',
  due: '2025-01-31',
  at: "'2025-01-31T09:00:00Z'",
  paid: 'true',
  status: 'Open',
  payment: "{ tag: Cash, value: '1.50' }",
  pair: "{ fst: '7', snd: x }",
  scaled: "{ value: '1.25' }",
  lines: '[]',
  tags: '{}',
  book: '[]',
  maybe: '[]',
  nothing: '{}',
};

/** A create of Shop:Order: ORDER with `fields` (YAML flow mapping entries) in place. */
function createOrder(fields: string): string {
  const given = new Map<string, string>();
  for (const m of fields.matchAll(/(?:^|, )(\w+): /g)) given.set(m[1]!, '');
  const rest = Object.entries(ORDER)
    .filter(([k]) => !given.has(k))
    .map(([k, v]) => `${k}: ${v}`);
  return `      - create: { template: '#shop:Shop:Order', createArguments: { ${[fields, ...rest].join(', ')} } }`;
}

/** The createArguments of a create of Shop:Order with `fields` (YAML flow mapping entries). */
function created_(
  fields: string,
  packages: PackageCatalogue | null = SHOP_CATALOGUE,
): Record<string, unknown> {
  const r = fire(createOrder(fields), packages);
  expect(r.errors).toEqual([]);
  const command = r.intents[0]!.command as { CreateCommand: { createArguments: unknown } };
  return command.CreateCommand.createArguments as Record<string, unknown>;
}

/** The rule error a create with `fields` gives when it fires. */
function renderError(fields: string): string {
  const r = fire(createOrder(fields));
  expect(r.intents).toEqual([]);
  return r.errors.map((e) => e.message).join('\n');
}

describe('a timestamp sent to a Date field', () => {
  it('is its UTC day, yyyy-mm-dd: today, now, a computed time', () => {
    const ship = (on: string) => sent('Ship', `{ carrier: x, on: '${on}', priority: Open }`);
    expect(ship('${{ today }}')).toEqual({ carrier: 'x', on: '2025-03-03', priority: 'Open' });
    expect(ship('${{ now }}')).toMatchObject({ on: '2025-03-03' });
    expect(ship('${{ now + duration("15h") }}')).toMatchObject({ on: '2025-03-04' });
    expect(ship('${{ date(event.createArgument.due) + duration("30d") }}')).toMatchObject({
      on: '2025-03-03',
    });
    // Text (a Date the ledger sent, a literal) goes as it is.
    expect(ship('${{ event.createArgument.due }}')).toMatchObject({ on: '2025-02-01' });
    expect(ship('2025-12-24')).toMatchObject({ on: '2025-12-24' });
  });

  it('without the packages the type is unknown: the timestamp is sent as it is, and damlDate() gives the day', () => {
    const ship = (on: string) => sent('Ship', `{ carrier: x, on: '${on}', priority: Open }`, NONE);
    expect(ship('${{ today }}')).toMatchObject({ on: '2025-03-03T00:00:00.000Z' });
    expect(ship('${{ damlDate(today) }}')).toMatchObject({ on: '2025-03-03' });
    expect(ship('${{ damlDate(now + duration("15h")) }}')).toMatchObject({ on: '2025-03-04' });
    // With the packages damlDate() is text, which a Date field takes as it is.
    expect(sent('Ship', `{ carrier: x, on: '\${{ damlDate(today) }}', priority: Open }`)).toEqual({
      carrier: 'x',
      on: '2025-03-03',
      priority: 'Open',
    });
  });

  it('is accepted by the check; Daml Time text for a Date is not, and the hint says how to convert it', () => {
    const problems = (on: string) =>
      load(exercise('Ship', `{ carrier: x, on: '${on}', priority: Open }`)).problems.map(
        (p) => `${p.code} ${p.message} (${p.hint ?? ''})`,
      );
    expect(problems('${{ today }}')).toEqual([]);
    expect(problems('${{ now }}')).toEqual([]);
    expect(problems('${{ event.createArgument.at }}')).toEqual([
      'TYPE_MISMATCH the expression gives a Daml Time, and the field is a Date (text) (a Time is text such as 2025-01-31T09:00:00Z, which a Date does not read: convert it, ${{ timestamp(…) }} is sent as its UTC day)',
    ]);
    expect(
      sent(
        'Ship',
        `{ carrier: x, on: '\${{ timestamp(event.createArgument.at) }}', priority: Open }`,
      ),
    ).toMatchObject({ on: '2025-01-31' });
  });
});

describe('a schedule’s today sent to a Date field', () => {
  it('is the slot’s day in the rule’s time zone; now is its UTC day', () => {
    const text = `version: 1
rules:
  - id: r
    schedule: { cron: '0 9 * * *', timezone: Pacific/Auckland }
    then:
${createOrder("due: '${{ today }}', note: '${{ damlDate(now) }}'")}
        actAs: [payer]
`;
    const { ruleSet, problems } = loadRules([{ path: 'r.yaml', text }], {
      parties: PARTIES,
      packages: SHOP_CATALOGUE,
    });
    expect(problems).toEqual([]);
    // 2025-03-03T20:00Z is 4 March, 09:00 in Auckland (UTC+13).
    const r = evaluateSlot(ruleSet.rules[0]!, new Date('2025-03-03T20:00:00Z'), null, {
      parties: PARTIES,
      snapshotOffset: 1,
    });
    expect(r.errors).toEqual([]);
    const command = r.intents[0]!.command as { CreateCommand: { createArguments: unknown } };
    expect(command.CreateCommand.createArguments).toMatchObject({
      due: '2025-03-04',
      note: '2025-03-03',
    });
  });
});

describe('a timestamp sent to a Time field', () => {
  it('is written as Canton writes Daml Time: seconds always, no trailing zeros in the fraction', () => {
    expect(created_(`at: '\${{ now }}'`, SHOP_CATALOGUE)).toMatchObject({
      at: '2025-03-03T09:30:00Z',
    });
    expect(created_(`at: '\${{ timestamp(event.createArgument.at) }}'`)).toMatchObject({
      at: '2025-01-31T09:00:00.5Z',
    });
    expect(created_(`at: '\${{ date("2025-01-31") }}'`)).toMatchObject({
      at: '2025-01-31T00:00:00Z',
    });
    // Without the packages: the ISO text, which Canton reads as a Time too.
    expect(created_(`at: '\${{ now }}'`, NONE)).toMatchObject({
      at: '2025-03-03T09:30:00.000Z',
    });
  });

  it('Daml Date text for a Time is a TYPE_MISMATCH whose hint converts it', () => {
    const { problems } = load(
      `      - create: { template: '#shop:Shop:Order', createArguments: { at: '\${{ event.createArgument.due }}' } }`,
    );
    expect(problems.find((p) => p.code === 'TYPE_MISMATCH')).toMatchObject({
      message: 'the expression gives a Daml Date, and the field is a Time (text)',
      hint: 'a Date is text such as 2025-01-31, which a Time does not read: convert it, ${{ date(…) }} is sent as its midnight UTC',
    });
  });

  it('a timestamp in a Text field stays its ISO text', () => {
    expect(created_(`note: '\${{ now }}'`)).toMatchObject({ note: '2025-03-03T09:30:00.000Z' });
  });
});

describe('numbers sent to Int and Numeric fields', () => {
  it('an Int is a whole number: a whole decimal or double loses its point', () => {
    expect(
      created_(
        `count: '\${{ decimal(event.createArgument.amount) * 2 }}', lines: [{ sku: a, qty: '\${{ 3.0 }}' }]`,
      ),
    ).toMatchObject({ count: '15', lines: [{ sku: 'a', qty: '3' }] });
    expect(created_(`count: '\${{ 7 }}'`)).toMatchObject({ count: '7' });
    expect(created_(`count: '\${{ 5u }}'`)).toMatchObject({ count: '5' });
  });

  it('an Int with a fraction, or beyond 64 bits, is a rule error, not a command Canton refuses', () => {
    expect(renderError(`count: '\${{ decimal(event.createArgument.amount) }}'`)).toContain(
      '7.5 has a fraction, and the field is an Int: give a whole number',
    );
    expect(renderError(`count: '\${{ 18446744073709551615u }}'`)).toContain(
      '18446744073709551615 does not fit an Int (64 bits)',
    );
    expect(renderError(`count: '\${{ 1.0e19 }}'`)).toContain('does not fit an Int (64 bits)');
    // Past 1e100 decimal.js writes an exponent, which is no Int either.
    expect(renderError(`count: '\${{ 1.0e150 }}'`)).toContain('does not fit an Int (64 bits)');
  });

  it('the check says how to send a Numeric to an Int', () => {
    const { problems } = load(
      `      - create: { template: '#shop:Shop:Order', createArguments: { count: '\${{ event.createArgument.amount }}' } }`,
    );
    expect(problems.find((p) => p.code === 'TYPE_MISMATCH')?.hint).toBe(
      'a Numeric is text with its decimals ("1.0000000000"), which an Int does not read: convert it, ${{ decimal(…) }} is sent as a whole number, and one with a fraction is a rule error',
    );
  });

  it('a Numeric n has n places, rounded half-even as Daml rounds', () => {
    expect(
      created_(`amount: '\${{ decimal("1") / 3 }}', scaled: { value: '\${{ decimal("0.125") }}' }`),
    ).toMatchObject({ amount: '0.3333333333', scaled: { value: '0.12' } });
    expect(created_(`amount: '\${{ 0.1 + 0.2 }}'`)).toMatchObject({ amount: '0.3000000000' });
    expect(created_(`amount: '\${{ 5 }}'`)).toMatchObject({ amount: '5.0000000000' });
    expect(created_(`amount: '\${{ decimal("0.00000000015") }}'`)).toMatchObject({
      amount: '0.0000000002',
    });
    // Text is sent as it is: the participant normalises it.
    expect(created_(`amount: '\${{ event.createArgument.amount }}'`)).toMatchObject({
      amount: '7.5000000000',
    });
    expect(
      sent('Settle', `{ how: { tag: Later, value: {} }, fee: '\${{ decimal("1.005") }}' }`),
    ).toEqual({ how: { tag: 'Later', value: {} }, fee: '1.00' });
    expect(sent('Settle', `{ how: { tag: Later, value: {} }, fee: '\${{ null }}' }`)).toEqual({
      how: { tag: 'Later', value: {} },
      fee: null,
    });
  });

  it('a Numeric too large for its scale is a rule error', () => {
    expect(renderError(`amount: '\${{ decimal("1${'0'.repeat(28)}") }}'`)).toContain(
      'is too large for a Numeric 10 (at most 28 digits before the point)',
    );
  });
});

describe('a whole value computed in CEL is sent by the type of each part', () => {
  it('records, Optionals, lists, TextMaps and variants', () => {
    expect(
      created_(
        [
          `terms: '\${{ {"days": 3.0, "penalty": decimal("0.125")} }}'`,
          `lines: '\${{ [{"sku": "a", "qty": 2.0}] }}'`,
          `tags: '\${{ {"red": 1.0} }}'`,
          `payment: '\${{ {"tag": "Card", "value": {"number": "4", "expires": today}} }}'`,
        ].join(', '),
      ),
    ).toMatchObject({
      terms: { days: '3', penalty: '0.12' },
      lines: [{ sku: 'a', qty: '2' }],
      tags: { red: '1' },
      payment: { tag: 'Card', value: { number: '4', expires: '2025-03-03' } },
    });
    expect(created_(`payment: '\${{ {"tag": "Cash", "value": decimal("1.5")} }}'`)).toMatchObject({
      payment: { tag: 'Cash', value: '1.50' },
    });
  });

  it('values written in the file: a variant with its tag, Map pairs, nested Optionals', () => {
    expect(
      created_(
        [
          `payment: { tag: Card, value: { number: '4', expires: '\${{ today }}' } }`,
          `book: [[k, '\${{ 2.0 }}']]`,
          `maybe: [['\${{ 5.0 }}']]`,
        ].join(', '),
      ),
    ).toMatchObject({
      payment: { tag: 'Card', value: { number: '4', expires: '2025-03-03' } },
      book: [['k', '2']],
      maybe: [['5']],
    });
  });

  it('a recursive type is described down to where it repeats, and loads', () => {
    const tree = pkg('tree', '1.0.0', {
      'Tree:Holder': { template: { owner: T.party, root: con('Tree:Node') } },
      'Tree:Node': { record: { at: T.date, next: T.opt(con('Tree:Node')) } },
    });
    const catalogue = PackageCatalogue.create([tree]);
    const text = `version: 1
rules:
  - id: r
    on: { created: '#tree:Tree:Holder', party: payer }
    then:
      - create: { template: '#tree:Tree:Holder', createArguments: { owner: x, root: '\${{ {"at": today, "next": null} }}' } }
        actAs: [payer]
`;
    const { ruleSet, problems } = loadRules([{ path: 'r.yaml', text }], {
      parties: PARTIES,
      packages: catalogue,
    });
    expect(problems).toEqual([]);
    const action = ruleSet.rules[0]!.then[0]!;
    const root =
      action.kind === 'create' && action.createArguments.kind === 'record'
        ? action.createArguments.fields.find((f) => f.name === 'root')?.value
        : undefined;
    const rendering = root?.kind === 'expression' ? root.rendering : undefined;
    expect(rendering?.kind).toBe('Record');
    const parts = (rendering as Extract<DamlRendering, { kind: 'Record' }>).parts;
    expect(parts.get('at')).toEqual({ kind: 'Date' });
    // Below the repetition nothing is described: `next` holds no other converting field.
    expect(parts.has('next')).toBe(false);
  });
});

describe('Daml Date and Time text of a timestamp', () => {
  it('stays within Daml’s dates, 0001-01-01 to 9999-12-31', () => {
    expect(damlDateText(new Date('2025-01-31T23:59:59.999Z'))).toBe('2025-01-31');
    expect(damlDateText(new Date('0001-01-01T00:00:00Z'))).toBe('0001-01-01');
    expect(damlDateText(new Date('9999-12-31T23:59:59.999Z'))).toBe('9999-12-31');
    expect(damlDateText(new Date('+010000-01-01T00:00:00Z'))).toBeNull();
    expect(damlDateText(new Date('0000-12-31T00:00:00Z'))).toBeNull();
    expect(damlDateText(new Date(Number.NaN))).toBeNull();
    expect(damlTimeText(new Date('2025-01-31T09:00:00.120Z'))).toBe('2025-01-31T09:00:00.12Z');
    expect(damlTimeText(new Date('2025-01-31T09:00:10.000Z'))).toBe('2025-01-31T09:00:10Z');
    expect(damlTimeText(new Date('+010000-01-01T00:00:00Z'))).toBeNull();
  });

  it('a misspelt damlDate() gets a did-you-mean', () => {
    const { problems } = load(
      exercise('Ship', `{ carrier: x, on: '\${{ damlDat(today) }}', priority: Open }`),
      NONE,
    );
    expect(problems.map((p) => `${p.code} ${p.hint ?? ''}`)).toEqual([
      'CEL_COMPILE_ERROR "damlDat" is not a function; did you mean "damlDate"?',
    ]);
  });

  it('damlDate() of a timestamp outside them is a rule error', () => {
    const r = fire(
      exercise(
        'Ship',
        `{ carrier: x, on: '\${{ damlDate(timestamp("0001-01-01T00:00:00Z") - duration("1s")) }}', priority: Open }`,
      ),
      NONE,
    );
    expect(r.intents).toEqual([]);
    expect(r.errors.map((e) => e.message).join('\n')).toMatch(
      /is not a Daml Date: Daml's dates run from 0001-01-01 to 9999-12-31/,
    );
  });
});
