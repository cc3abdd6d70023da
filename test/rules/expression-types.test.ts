import { describe, expect, it } from 'vitest';
import { actionRule, shopProblems, whenRule } from './typed-catalogue.js';

// `    when: '` is 11 characters: the expression starts at column 12; `event.createArgument.` is
// 21 more, so a field of the template starts at column 33.
const at = (when: string) => shopProblems(whenRule(when));

describe('field paths through every kind of Daml type', () => {
  it('accepts paths the types have', () => {
    expect(
      at(
        'event.createArgument.pair.fst == "1" && event.createArgument.scaled.value == "1.00" && event.createArgument.lines.exists(l, l.sku == "x") && event.createArgument.tags.red == "1" && event.createArgument.tags["blue"] == "2" && event.createArgument.payment.tag == "Cash" && event.contractKey.ref == "r" && event.createArgument.status == "Open"',
      ),
    ).toEqual([]);
  });

  it('generic records: their fields, with the type arguments substituted', () => {
    expect(at('event.createArgument.pair.third == "x"')).toEqual([
      'UNKNOWN_FIELD 5:38 field "pair" has no field "third" (its fields: fst, snd)',
    ]);
    expect(at('event.createArgument.pair.fst > 1')).toEqual([
      'NUMERIC_AS_NUMBER 5:38 field "fst" is a Daml Int64, which arrives as text, so `>` with a number fails on every event ("no such overload") (convert it: int(event.createArgument.pair.fst) > …, or decimal(event.createArgument.pair.fst) > decimal("…"))',
    ]);
    expect(at('event.createArgument.scaled.value < decimal("1")')).toEqual([
      'TYPE_MISMATCH 5:40 field "value" is a Daml Numeric 2 (text), so `<` with a Decimal fails on every event ("no such overload") (compare it as a decimal: decimal(event.createArgument.scaled.value) < decimal("…"))',
    ]);
  });

  it('the key, list items, text maps, enums, variants, GenMaps and text are located', () => {
    expect(at('event.contractKey.reff == "x"')).toEqual([
      'UNKNOWN_FIELD 5:30 the key of Shop:Order has no field "reff" (did you mean "ref"?)',
    ]);
    expect(at('event.createArgument.lines.sku == "x"')).toEqual([
      'UNKNOWN_FIELD 5:39 field "lines" is a list ([Line]), which has no field "sku" (read its items: x[0].field, or x.all(i, i.field …), x.exists(i, …))',
    ]);
    expect(at('event.createArgument.status.name == "x"')).toEqual([
      'UNKNOWN_FIELD 5:40 field "status" is an enum (Status), which is text, which has no field "name" (an enum value is the name of its constructor, as text (Open, Shipped, Closed))',
    ]);
    expect(at('event.createArgument.payment.amount == "1"')).toEqual([
      'UNKNOWN_FIELD 5:41 field "payment" is a variant (Payment), which has only "tag" and "value", not "amount" (its tag is one of Cash, Card, Later: compare it first, e.g. x.tag == "Cash" && x.value…)',
    ]);
    expect(at('event.createArgument.book.k == 1')).toEqual([
      'UNKNOWN_FIELD 5:38 field "book" is a Map (Map Text Int), a list of [key, value] pairs, which has no field "k" (read its pairs: x.exists(p, p[0] == … && p[1] …))',
    ]);
    expect(at('event.createArgument.buyer.name == "x"')).toEqual([
      'UNKNOWN_FIELD 5:39 field "buyer" is a Party (text), which has no field "name" (remove the field, or read another field of the record around it)',
    ]);
  });
});

describe('comparisons of incompatible types (TYPE_MISMATCH)', () => {
  it('a Date, a Time or a Numeric compared with a CEL value of another type', () => {
    expect(at('event.createArgument.due < decimal("3")')).toEqual([
      'TYPE_MISMATCH 5:33 field "due" is a Daml Date (text), so `<` with a Decimal fails on every event ("no such overload") (compare it as a date: date(event.createArgument.due) < …)',
    ]);
    expect(at('event.createArgument.due < today')).toEqual([
      'TYPE_MISMATCH 5:33 field "due" is a Daml Date (text), so `<` with a timestamp fails on every event ("no such overload") (compare it as a date: date(event.createArgument.due) < …)',
    ]);
    expect(at('now > event.createArgument.at')).toEqual([
      'TYPE_MISMATCH 5:39 field "at" is a Daml Time (text), so `>` with a timestamp fails on every event ("no such overload") (compare it as a time: timestamp(event.createArgument.at) > …)',
    ]);
    expect(at('event.createArgument.paid == "yes"')).toEqual([
      'TYPE_MISMATCH 5:33 field "paid" is a Daml Bool (bool), so `==` with text is always false (compare it with a bool)',
    ]);
  });

  it('numbers compared as text, and a Numeric against another field', () => {
    expect(at('event.createArgument.amount < "1000"')).toEqual([
      'TYPE_MISMATCH 5:33 field "amount" is a Daml Numeric 10 (text), so `<` compares it as text, not as a number ("10" < "9") (compare it as a decimal: decimal(event.createArgument.amount) < decimal("…"))',
    ]);
    expect(at('event.createArgument.count + event.createArgument.count == "2"')).toEqual([
      'TYPE_MISMATCH 5:33 field "count" is a Daml Int (text), so `+` does not compute with it as a number (convert it: int(event.createArgument.count), or compare it as a decimal: decimal(event.createArgument.count) + decimal("…"))',
    ]);
  });

  it('what works is not reported', () => {
    expect(
      at(
        'decimal(event.createArgument.amount) < decimal("3") && date(event.createArgument.due) < today && event.createArgument.note == null && event.createArgument.buyer == parties.payer && event.createArgument.due == "2025-01-01" && event.createArgument.due < "2026-01-01"',
      ),
    ).toEqual([]);
  });
});

describe('reads below an Optional or a variant without a guard (warnings)', () => {
  it('below an Optional record', () => {
    expect(at('event.createArgument.terms.days == "1"')).toEqual([
      'warning UNGUARDED_OPTIONAL 5:39 field "terms" is an Optional: reading "days" below it fails when it is None (null) (check it first: event.createArgument.terms != null && …)',
    ]);
    expect(
      at('event.createArgument.terms != null && event.createArgument.terms.days == "1"'),
    ).toEqual([]);
  });

  it('a guard in an earlier `when` condition counts, and for the actions', () => {
    const text = actionRule(
      `      - exercise: { template: '#shop:Shop:Order', contractId: '\${{ event.contractId }}', choice: Ship, choiceArgument: { carrier: '\${{ event.createArgument.terms.days }}', on: '2025-01-01', priority: Open } }`,
      'event.createArgument.terms != null',
    );
    expect(shopProblems(text)).toEqual([]);
    const unguarded = text.replace("    when: 'event.createArgument.terms != null'\n", '');
    expect(shopProblems(unguarded)).toEqual([
      expect.stringMatching(/^warning UNGUARDED_OPTIONAL 6:\d+ field "terms" is an Optional/),
    ]);
  });

  it("below a variant's value, unless its tag is tested", () => {
    expect(at('event.createArgument.payment.value.number == "1"')).toEqual([
      'warning UNGUARDED_VARIANT 5:47 field "payment" is a variant: "value" holds the argument of whichever constructor it has, so "number" may not be there (check its constructor first: event.createArgument.payment.tag == "…" && …)',
    ]);
    expect(
      at(
        'event.createArgument.payment.tag == "Card" && event.createArgument.payment.value.number == "1"',
      ),
    ).toEqual([]);
  });

  it('has() is no guard: every field read is filled in', () => {
    expect(
      at('has(event.createArgument.terms.days) && event.createArgument.terms.days == "1"'),
    ).toHaveLength(2);
  });
});
