import { describe, expect, it } from 'vitest';
import { compileValue } from '../../src/rules/compile-value.js';
import { EVENT_RULE_VARIABLES } from '../../src/rules/compiled-rule.js';
import { oneRule, ruleScope } from './rule-scope-fixture.js';

const ARGS = ['rules', 0, 'then', 0, 'exercise', 'choiceArgument'];

function compile(choiceArgument: string) {
  const { scope, problems } = ruleScope(oneRule('', `, choiceArgument: ${choiceArgument}`));
  const raw = (scope.raw.then as Record<string, Record<string, unknown>>[])[0]!.exercise!
    .choiceArgument;
  return { value: compileValue(scope, raw, ARGS, EVENT_RULE_VARIABLES, 'event'), problems, scope };
}

describe('compileValue', () => {
  it('folds a value without expressions into one literal, with Daml numbers as their exact text', () => {
    expect(compile('{ note: hi, amount: 12345678901234567890, tags: [a, b] }').value).toEqual({
      kind: 'literal',
      value: { note: 'hi', amount: '12345678901234567890', tags: ['a', 'b'] },
    });
  });

  it('keeps a whole "${{ }}" an expression, and text around one an interpolation', () => {
    const { value } = compile(
      '{ id: "${{ event.contractId }}", note: "cid ${{ event.contractId }}" }',
    );
    expect(value).toMatchObject({
      kind: 'record',
      fields: [
        { name: 'id', value: { kind: 'expression', expression: { source: 'event.contractId' } } },
        {
          name: 'note',
          value: { kind: 'interpolation', parts: ['cid ', { source: 'event.contractId' }] },
        },
      ],
    });
  });

  it('reports an unclosed "${{" at its place and fails the rule', () => {
    const { value, problems, scope } = compile('{ note: "a ${{ event.contractId" }');
    expect(value).toBeNull();
    expect(scope.ok).toBe(false);
    expect(problems).toMatchObject([{ code: 'BAD_TEMPLATE', line: 6 }]);
  });

  it('reports a CEL error inside "${{ }}" with a did-you-mean hint', () => {
    const { value, problems } = compile('{ note: "${{ evnt.contractId }}" }');
    expect(value).toBeNull();
    expect(problems).toMatchObject([{ code: 'CEL_COMPILE_ERROR', hint: 'did you mean "event"?' }]);
  });
});
