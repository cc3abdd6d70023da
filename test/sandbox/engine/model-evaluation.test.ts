import { describe, expect, it } from 'vitest';
import { CelDecimal } from '../../../src/rules/cel/cel-decimal.js';
import { InterpreterAbort } from '../../../src/sandbox/engine/interpreter-abort.js';
import {
  celToJson,
  partiesOf,
  sortedUnique,
} from '../../../src/sandbox/engine/model-evaluation.js';
import type { PartiesExpr } from '../../../src/sandbox/model/model-types.js';

const pos = { file: 'm.yaml', line: 1, col: 1 };
const field = (name: string): PartiesExpr => ({ kind: 'field', field: name, pos });

describe('model evaluation', () => {
  it('turns CEL values into Daml-LF JSON', () => {
    expect(
      celToJson({
        n: 5n,
        d: CelDecimal.parse('1.50'),
        t: new Date(Date.UTC(2026, 0, 1)),
        m: new Map([['k', [1n]]]),
      }),
    ).toEqual({
      n: '5',
      d: CelDecimal.parse('1.50')!.toString(),
      t: '2026-01-01T00:00:00.000Z',
      m: { k: ['1'] },
    });
  });

  it('reads parties from fields (of the argument, else of `arg`), sorted and unique', () => {
    const parties = partiesOf(
      [field('payer'), field('issuer'), field('extra'), field('none')],
      { payer: 'P', issuer: ['I', 'P'], none: null },
      { arg: { extra: 'E' } },
      'signatories',
    );
    expect(parties).toEqual(['E', 'I', 'P']);
    expect(sortedUnique(['b', 'a', 'b'])).toEqual(['a', 'b']);
  });

  it('fails the transaction when a field is not a party', () => {
    try {
      partiesOf([field('n')], { n: 5 }, {}, 'observers');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InterpreterAbort);
      expect((error as InterpreterAbort).error.code).toBe('DAML_INTERPRETATION_ERROR');
      expect((error as InterpreterAbort).error.cause).toContain('observers must be parties, got 5');
    }
  });
});
