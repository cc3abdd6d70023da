import { describe, expect, it } from 'vitest';
import type { Intent } from '../../../src/rules/evaluation-result.js';
import { compareCommands } from '../../../src/rules/rule-tests/compare-commands.js';
import { compareErrors } from '../../../src/rules/rule-tests/compare-errors.js';
import type { ExpectedCommand } from '../../../src/rules/rule-tests/rule-test-case.js';

const POS = { file: 't.yaml', line: 7, col: 5 };

function intent(ruleId: string, amount: string): Intent {
  return {
    ruleId,
    actionIndex: 0,
    command: {
      ExerciseCommand: {
        templateId: 'pkg:M:E',
        contractId: 'c1',
        choice: 'Pay',
        choiceArgument: { amount },
      },
    },
    actAs: ['Payer::1'],
    readAs: [],
    workflowId: ruleId,
    commandId: `lb-${ruleId}`,
  } as unknown as Intent;
}

function expectPay(amount: string, rule: string | null = 'pay'): ExpectedCommand {
  return {
    pos: POS,
    rule,
    command: { kind: 'exercise', fields: { choice: 'Pay', choiceArgument: { amount } } },
    actAs: ['Payer::1'],
    readAs: null,
    workflowId: null,
    commandId: null,
  };
}

describe('compareCommands', () => {
  it('passes when every expectation has its own command, in any order', () => {
    const intents = [intent('pay', '2'), intent('pay', '1')];
    expect(compareCommands([expectPay('1'), expectPay('2')], intents, [], undefined)).toEqual([]);
  });

  it('lets an exact match take its command before a near miss can steal it', () => {
    // The first expectation is a near miss of both; the second matches the first command exactly.
    const intents = [intent('pay', '1'), intent('pay', '2')];
    const failures = compareCommands([expectPay('3'), expectPay('1')], intents, [], undefined);
    expect(failures).toEqual([
      [
        'expected command 1 from rule pay (line 7) was not produced',
        '  closest: rule pay, then[0] (- expected, + actual)',
        '  - exercise.choiceArgument.amount: "3"',
        '  + exercise.choiceArgument.amount: "2"',
      ],
    ]);
  });

  it('compares numbers with their decimal text, as Daml values travel', () => {
    const exp = {
      ...expectPay('x'),
      command: { kind: 'exercise' as const, fields: { choiceArgument: { amount: 1.5 } } },
    };
    expect(compareCommands([exp], [intent('pay', '1.50')], [], undefined)).toEqual([]);
  });

  it('reports a command nobody expected', () => {
    expect(compareCommands([], [intent('pay', '1')], [], undefined)).toEqual([
      [
        'unexpected command from rule pay, then[0]',
        expect.stringContaining('  + {"ExerciseCommand"'),
        '  + actAs: ["Payer::1"]',
      ],
    ]);
  });
});

describe('compareErrors', () => {
  const error = {
    ruleId: 'pay',
    code: 'CEL_EVALUATION_ERROR',
    message: 'no such key: amount',
    pos: POS,
  };

  it('matches an expected error by rule, part of the message and code', () => {
    const expected = [{ pos: POS, rule: 'pay', message: 'no such key', code: null }];
    expect(compareErrors(expected, [error as never])).toEqual([]);
  });

  it('fails on a rule error when the case expects none', () => {
    const [failure] = compareErrors(null, [error as never]);
    expect(failure![0]).toBe('unexpected rule error (add `expectErrors:` if it is intended)');
  });
});
