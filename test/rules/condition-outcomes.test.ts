import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/rules/evaluate.js';
import { CONTEXT, created, input, rules } from './rule-fixtures.js';

const RULES = rules(`
version: 1
rules:
  - id: three
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when:
      - event.createArgument.a == "yes"
      - decimal(event.createArgument.b) > 1
      - event.createArgument.c == "yes"
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [payer] }]
`);

const run = (a: string, b: string, c: string) => {
  const event = input({ CreatedEvent: created({ createArgument: { a, b, c } }) });
  const x = evaluate(RULES, event, CONTEXT).explanations[0]!;
  return [
    x.conditions.map((o) => `${o.index}:${o.outcome}`).join(' '),
    x.fired,
    x.error?.code ?? null,
  ];
};

describe('condition outcomes', () => {
  it('say where evaluation stopped, whatever the order the evaluations come in', () => {
    const cases: [[string, string, string], unknown[]][] = [
      [
        ['no', '5', 'yes'],
        ['0:false 1:skipped 2:skipped', false, null],
      ],
      [
        ['yes', '0', 'yes'],
        ['0:true 1:false 2:skipped', false, null],
      ],
      [
        ['yes', '5', 'no'],
        ['0:true 1:true 2:false', false, null],
      ],
      [
        ['yes', '5', 'yes'],
        ['0:true 1:true 2:true', true, null],
      ],
      [
        ['yes', 'lots', 'yes'],
        ['0:true 1:error 2:skipped', false, 'CEL_EVALUATION_ERROR'],
      ],
    ];
    for (const order of [cases, [...cases].reverse(), [...cases, ...cases]]) {
      for (const [fields, expected] of order) expect(run(...fields)).toEqual(expected);
    }
  });
});
