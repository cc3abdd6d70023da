import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/rules/evaluate.js';
import { evaluateSlot } from '../../src/rules/evaluate-slot.js';
import { loadRules } from '../../src/rules/load-rules.js';
import { parseRuleTestFile, runRuleTests } from '../../src/rules/rule-tests/index.js';
import { PackageCatalogue } from '../../src/daml-lf/package-catalogue.js';
import { con, pkg, T } from './signature-builder.js';
import { CONTEXT, PARTIES, created, exercised, input, rules } from './rule-fixtures.js';

/**
 * Canton 3.5 leaves trailing None fields out of every record it sends. A rule reads such a field
 * as null, exactly as it reads one the participant sent as null.
 */

const OPTIONAL_RULES = `
version: 1
rules:
  - id: no-note
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: event.createArgument.note == null
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
  - id: with-note
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: event.createArgument.note != null
    then:
      - exercise:
          template: "#invoices:Invoice:Invoice"
          contractId: "\${{ event.contractId }}"
          choice: Remind
          choiceArgument: { note: "\${{ event.createArgument.note }}" }
        actAs: [payer]
  - id: nested-none
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: event.createArgument.terms.penalty == null && has(event.createArgument.terms.penalty)
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Cancel }
        actAs: [payer]
  - id: lines-without-memo
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: size(event.createArgument.lines) > 0 && event.createArgument.lines.all(l, l.memo == null)
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Archive }
        actAs: [payer]
`;

const BASE = {
  issuer: PARTIES.issuer,
  payer: PARTIES.payer,
  amount: '10.00',
  currency: 'USD',
  terms: { days: '30' }, // trailing `penalty: None` left out
  lines: [{ sku: 'A' }, { sku: 'B', memo: null }],
};

function fired(createArgument: Record<string, unknown>): string[] {
  const r = evaluate(
    rules(OPTIONAL_RULES),
    input({ CreatedEvent: created({ createArgument }) }),
    CONTEXT,
  );
  expect(r.errors).toEqual([]);
  return r.intents.map((i) => i.ruleId);
}

describe('Optional fields the participant leaves out', () => {
  it('read null: == null fires, != null does not, nested records and list items included', () => {
    expect(fired(BASE)).toEqual(['no-note', 'nested-none', 'lines-without-memo']);
  });

  it('read the same as when they are sent as null (Canton 3.4, non-trailing None)', () => {
    const sent = {
      ...BASE,
      note: null,
      terms: { days: '30', penalty: null },
      lines: [
        { sku: 'A', memo: null },
        { sku: 'B', memo: null },
      ],
    };
    expect(fired(sent)).toEqual(fired(BASE));
  });

  it('read their value when present', () => {
    const r = evaluate(
      rules(OPTIONAL_RULES),
      input({
        CreatedEvent: created({
          createArgument: { ...BASE, note: 'hello', lines: [{ sku: 'A', memo: 'x' }] },
        }),
      }),
      CONTEXT,
    );
    expect(r.intents.map((i) => i.ruleId)).toEqual(['with-note', 'nested-none']);
    const command = r.intents[0]!.command as { ExerciseCommand: { choiceArgument: unknown } };
    expect(command.ExerciseCommand.choiceArgument).toEqual({ note: 'hello' });
  });

  it('never changes the event given', () => {
    const createArgument = structuredClone(BASE);
    const event = created({ createArgument });
    const before = structuredClone(event);
    evaluate(rules(OPTIONAL_RULES), input({ CreatedEvent: event }), CONTEXT);
    expect(event).toEqual(before);
    expect(event.createArgument).toBe(createArgument);
  });

  it('does not make up the Daml value itself, nor fields outside Daml values', () => {
    const set = rules(`
version: 1
rules:
  - id: key-field
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: event.contractKey.reference == null
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
  - id: event-field
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: event.contractKeyHash == null
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
`);
    // contractKey is null (no key): the path stops there, and reading a field of null fails.
    const r = evaluate(set, input({ CreatedEvent: created() }), CONTEXT);
    expect(r.errors.map((e) => [e.ruleId, e.message])).toEqual([
      ['key-field', expect.stringMatching(/No such key: reference/)],
      // An optional field of the event itself that the participant left out is not made up
      // (a field no event of the kind has is a load error: UNKNOWN_EVENT_FIELD).
      ['event-field', expect.stringMatching(/No such key: contractKeyHash/)],
    ]);
  });

  it('apply to the choice argument and result of exercises', () => {
    const set = rules(`
version: 1
rules:
  - id: remind-without-note
    on:
      exercised: { template: "#invoices:Invoice:Invoice", choice: Remind }
      party: payer
    when: [event.choiceArgument.note == null, event.exerciseResult.detail == null]
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
`);
    const r = evaluate(
      set,
      input({ ExercisedEvent: exercised({ choiceArgument: {}, exerciseResult: { text: 'x' } }) }),
      CONTEXT,
    );
    expect(r.errors).toEqual([]);
    expect(r.intents.map((i) => i.ruleId)).toEqual(['remind-without-note']);
  });

  it('apply to the contract of a schedule rule', () => {
    const set = rules(`
version: 1
rules:
  - id: nightly
    schedule: { cron: "0 1 * * *" }
    forEach: { activeContracts: "#invoices:Invoice:Invoice", party: payer }
    when: contract.createArgument.note == null
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ contract.contractId }}", choice: Remind }
        actAs: [payer]
`);
    const r = evaluateSlot(set.rules[0]!, new Date('2025-03-03T01:00:00Z'), created(), {
      parties: PARTIES,
      snapshotOffset: 7,
    });
    expect(r.errors).toEqual([]);
    expect(r.intents).toHaveLength(1);
  });

  it('read through interface views', () => {
    const set = rules(`
version: 1
rules:
  - id: view-note
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: event.interfaceViews.exists(v, v.viewValue.note == null)
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
`);
    const view = {
      interfaceId: 'a'.repeat(64) + ':Payment:Payable',
      viewStatus: { code: 0, message: '', details: [] },
      viewValue: { payer: PARTIES.payer },
    };
    const r = evaluate(set, input({ CreatedEvent: created({ interfaceViews: [view] }) }), CONTEXT);
    expect(r.errors).toEqual([]);
    expect(r.intents).toHaveLength(1);
  });
});

/** Invoice with an Optional note, a nested record with an Optional field, and a list of lines. */
const CATALOGUE = PackageCatalogue.create([
  pkg('invoices', '1.0.0', {
    'Invoice:Invoice': {
      template: {
        payer: T.party,
        amount: T.numeric(10),
        note: T.opt(T.text),
        terms: con('Invoice:Terms'),
        lines: T.list(con('Invoice:Line')),
      },
      choices: { Accept: {}, Remind: { argument: { note: T.text } } },
    },
    'Invoice:Terms': { record: { days: T.int, penalty: T.opt(T.numeric(2)) } },
    'Invoice:Line': { record: { memo: T.text } },
  }),
]);

function problems(when: string, trigger = 'created: "#invoices:Invoice:Invoice"'): unknown[] {
  const text = `version: 1
rules:
  - id: r
    on: { ${trigger}, party: payer }
    when: '${when}'
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
`;
  return loadRules([{ path: 'r.yaml', text }], { parties: PARTIES, packages: CATALOGUE })
    .problems.filter((p) => p.severity === 'error')
    .map((p) => ({ line: p.line, col: p.col, code: p.code, message: p.message, hint: p.hint }));
}

describe('field names checked against a known template', () => {
  it('accepts the fields the template has', () => {
    expect(
      problems(
        'event.createArgument.note == null && event.createArgument.terms.penalty == null && event.createArgument.lines.all(l, l.memo == null)',
      ),
    ).toEqual([]);
  });

  it('reports a misspelt field at its line:col, with a did-you-mean', () => {
    expect(problems('event.createArgument.nte == null')).toEqual([
      {
        line: 5,
        col: 33,
        code: 'UNKNOWN_FIELD',
        message: 'template Invoice:Invoice has no field "nte"',
        hint: 'did you mean "note"?',
      },
    ]);
  });

  it('reports misspelt fields of nested records, list items and choice arguments', () => {
    expect(problems('event.createArgument.terms.penalti == null')).toMatchObject([
      { col: 39, message: 'field "terms" has no field "penalti"', hint: 'did you mean "penalty"?' },
    ]);
    expect(problems('event.createArgument.lines.exists(l, l.mmo == null)')).toMatchObject([
      { col: 51, message: 'an item of field "lines" has no field "mmo"' },
    ]);
    expect(
      problems(
        'event.choiceArgument.nte == null',
        'exercised: { template: "#invoices:Invoice:Invoice", choice: Remind }',
      ),
    ).toMatchObject([
      { message: 'the argument of choice Remind of Invoice:Invoice has no field "nte"' },
    ]);
  });

  it('checks ${{ }} expressions in commands too', () => {
    const text = `version: 1
rules:
  - id: r
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - exercise:
          template: "#invoices:Invoice:Invoice"
          contractId: "\${{ event.contractId }}"
          choice: Remind
          choiceArgument: { note: "\${{ event.createArgument.noet }}" }
        actAs: [payer]
`;
    const found = loadRules([{ path: 'r.yaml', text }], { parties: PARTIES, packages: CATALOGUE });
    expect(found.problems).toMatchObject([{ line: 10, col: 61, code: 'UNKNOWN_FIELD' }]);
  });

  it('reads a misspelt field as null when the template is unknown (no catalogue)', () => {
    const set = rules(`
version: 1
rules:
  - id: typo
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: event.createArgument.ntoe == null
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
`);
    const r = evaluate(set, input({ CreatedEvent: created() }), CONTEXT);
    expect(r.intents.map((i) => i.ruleId)).toEqual(['typo']);
  });
});

describe('rule tests (ledgerbot test) with left-out Optionals and Int fields', () => {
  const set = rules(`
version: 1
rules:
  - id: count-unnoted
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: event.createArgument.note == null
    then:
      - create:
          template: "#invoices:Audit:Entry"
          createArguments: { next: "\${{ int(event.createArgument.count) + 1 }}", fixed: 7 }
        actAs: [payer]
`);

  it('a given event without the field fires == null; expected numbers match the text sent', () => {
    const parsed = parseRuleTestFile(
      't.test.yaml',
      `
rules: ../rules
parties: { payer: "Payer::1220aaaa" }
tests:
  - name: no note
    given:
      - created: { template: "#invoices:Invoice:Invoice", createArgument: { count: 4 } }
    expect:
      - rule: count-unnoted
        create: { createArguments: { next: 5, fixed: "7" } }
        actAs: [payer]
  - name: a note
    given:
      - created: { template: "#invoices:Invoice:Invoice", createArgument: { count: 4, note: hi } }
    expect: []
`,
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const result = runRuleTests(parsed.file, set);
    expect(result.cases.map((c) => c.failures)).toEqual([[], []]);
    const command = result.cases[0]!.intents[0]!.command as {
      CreateCommand: { createArguments: unknown };
    };
    expect(command.CreateCommand.createArguments).toEqual({ next: '5', fixed: '7' });
  });
});
