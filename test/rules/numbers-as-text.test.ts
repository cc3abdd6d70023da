import { describe, expect, it } from 'vitest';
import { numberText, yamlNumberText } from '../../src/rules/daml-number-text.js';
import { evaluate } from '../../src/rules/evaluate.js';
import { loadRules } from '../../src/rules/load-rules.js';
import { CONTEXT, PARTIES, created, input, rules } from './rule-fixtures.js';

/** Canton 3.5 reads Int64 only from a JSON string; every number in a command value is text. */

describe('numberText and yamlNumberText', () => {
  it('give the exact decimal text, without exponent', () => {
    expect(numberText(42)).toBe('42');
    expect(numberText(-0)).toBe('0');
    expect(numberText(0.1)).toBe('0.1');
    expect(numberText(1e21)).toBe('1000000000000000000000');
    expect(numberText(1.5e-7)).toBe('0.00000015');
    expect(numberText(Number.NaN)).toBeNull();
    expect(numberText(Number.POSITIVE_INFINITY)).toBeNull();
    expect(yamlNumberText('12345678901234567890')).toBe('12345678901234567890');
    expect(yamlNumberText('-9223372036854775808')).toBe('-9223372036854775808');
    expect(yamlNumberText('+5')).toBe('5');
    expect(yamlNumberText('0x1F')).toBe('31');
    expect(yamlNumberText('0o17')).toBe('15');
    expect(yamlNumberText('99.990')).toBe('99.99');
    expect(yamlNumberText('1.25e3')).toBe('1250');
    expect(yamlNumberText('0.1000000000000000055511151231257827')).toBe(
      '0.1000000000000000055511151231257827',
    );
    expect(yamlNumberText('.inf')).toBeNull();
    expect(yamlNumberText('.nan')).toBeNull();
  });
});

const NUMBERS = `
version: 1
rules:
  - id: numbers
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - createAndExercise:
          template: "#invoices:Audit:Entry"
          createArguments:
            computed: "\${{ size(event.createArgument.reference) * 2 }}"
            written: 7
            big: 9223372036854775807
            numeric: 12.50
            double: "\${{ 1.0e21 }}"
            unsigned: "\${{ 5u }}"
            offset: "\${{ event.offset }}"
            list: [1, "\${{ 2 }}"]
            interpolated: "n=\${{ 3 }} d=\${{ 1.0e21 }}"
          choice: Record
          choiceArgument: { count: 3, nested: { deep: [-1] } }
        actAs: [payer]
        workflowId: audit
`;

describe('numbers in command values', () => {
  it('are sent as text: CEL ints, uints and doubles, and YAML numbers (exact digits)', () => {
    const r = evaluate(rules(NUMBERS), input({ CreatedEvent: created() }), CONTEXT);
    expect(r.errors).toEqual([]);
    const command = r.intents[0]!.command as {
      CreateAndExerciseCommand: { createArguments: unknown; choiceArgument: unknown };
    };
    expect(command.CreateAndExerciseCommand.createArguments).toEqual({
      computed: '10',
      written: '7',
      big: '9223372036854775807',
      numeric: '12.5',
      double: '1000000000000000000000',
      unsigned: '5',
      offset: '42',
      list: ['1', '2'],
      interpolated: 'n=3 d=1000000000000000000000',
    });
    expect(command.CreateAndExerciseCommand.choiceArgument).toEqual({
      count: '3',
      nested: { deep: ['-1'] },
    });
  });

  it('are turned into text once, when the rule is compiled', () => {
    const action = rules(NUMBERS).rules[0]!.then[0]!;
    expect(action.kind === 'createAndExercise' && action.choiceArgument).toEqual({
      kind: 'literal',
      value: { count: '3', nested: { deep: ['-1'] } },
    });
  });

  it('keep a number that is no contract id an error, rather than sending "0" as one', () => {
    const set = rules(`
version: 1
rules:
  - id: bad-id
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.nodeId }}", choice: Accept }
        actAs: [payer]
`);
    const r = evaluate(set, input({ CreatedEvent: created() }), CONTEXT);
    expect(r.errors[0]!.message).toMatch(/contractId must be non-empty text, got the number 0/);
  });

  it('refuses .inf in a command value when the rule is loaded', () => {
    const text = `version: 1
rules:
  - id: inf
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - create: { template: "#invoices:Audit:Entry", createArguments: { x: .inf } }
        actAs: [payer]
`;
    const { problems } = loadRules([{ path: 'r.yaml', text }], { parties: PARTIES });
    expect(problems).toMatchObject([{ line: 6, col: 76, code: 'BAD_VALUE' }]);
  });
});
