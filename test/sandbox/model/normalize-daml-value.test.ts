import { describe, expect, it } from 'vitest';
import { CelDecimal } from '../../../src/rules/cel/cel-decimal.js';
import type { DamlType } from '../../../src/sandbox/model/model-types.js';
import { normalizeDamlValue } from '../../../src/sandbox/model/normalize-daml-value.js';
import { parseDamlType } from '../../../src/sandbox/model/parse-daml-type.js';

function type(text: string): DamlType {
  const t = parseDamlType(text);
  if ('problem' in t) throw new Error(t.problem);
  return t;
}

const strict = (t: string, v: unknown) => normalizeDamlValue(type(t), v, 'x', { round: false });

describe('normalizeDamlValue', () => {
  it('renders Numerics at their scale and Int64 as strings', () => {
    expect(strict('Numeric', '999.99')).toEqual({ ok: true, value: '999.9900000000' });
    expect(strict('Numeric 2', 12)).toEqual({ ok: true, value: '12.00' });
    expect(strict('Numeric 0', '-7')).toEqual({ ok: true, value: '-7' });
    expect(strict('Int64', 42)).toEqual({ ok: true, value: '42' });
    expect(strict('Int64', '9223372036854775808').ok).toBe(false);
    expect(strict('Numeric 2', '1.005').ok).toBe(false);
    expect(
      normalizeDamlValue(type('Numeric 2'), CelDecimal.parse('1.005'), 'x', { round: true }),
    ).toEqual({ ok: true, value: '1.00' });
    expect(normalizeDamlValue(type('Int64'), 5n, 'x', { round: true })).toEqual({
      ok: true,
      value: '5',
    });
  });

  it('normalises dates and times', () => {
    expect(strict('Date', '2025-02-28')).toEqual({ ok: true, value: '2025-02-28' });
    expect(strict('Date', '2025-02-29').ok).toBe(false);
    expect(strict('Time', '2025-01-27T15:30:37Z')).toEqual({
      ok: true,
      value: '2025-01-27T15:30:37Z',
    });
    // Times inside values print as Canton's codec does (ISO_DATE_TIME): no trailing zeros.
    expect(strict('Time', '2025-01-27T15:30:37.2918Z')).toEqual({
      ok: true,
      value: '2025-01-27T15:30:37.2918Z',
    });
    expect(strict('Time', '2025-01-27T15:30:37.120Z')).toEqual({
      ok: true,
      value: '2025-01-27T15:30:37.12Z',
    });
    expect(strict('Time', '2025-01-27T15:30:37.500000Z')).toEqual({
      ok: true,
      value: '2025-01-27T15:30:37.5Z',
    });
    expect(strict('Time', '2025-01-27T15:30:37.000Z')).toEqual({
      ok: true,
      value: '2025-01-27T15:30:37Z',
    });
    expect(strict('Time', '2025-01-27T16:30:37+01:00')).toEqual({
      ok: true,
      value: '2025-01-27T15:30:37Z',
    });
    expect(
      normalizeDamlValue(type('Date'), new Date(Date.UTC(2025, 0, 2)), 'x', { round: true }),
    ).toEqual({ ok: true, value: '2025-01-02' });
  });

  it('handles optionals, lists, maps and enums', () => {
    expect(strict('Optional Text', null)).toEqual({ ok: true, value: null });
    expect(strict('Optional Text', undefined)).toEqual({ ok: true, value: null });
    expect(strict('List (Numeric 1)', ['1', 2])).toEqual({ ok: true, value: ['1.0', '2.0'] });
    expect(strict('TextMap Int64', { b: 2, a: '1' })).toEqual({
      ok: true,
      value: { a: '1', b: '2' },
    });
    expect(
      normalizeDamlValue({ kind: 'Enum', constructors: ['Low'] }, 'High', 'x', { round: false }).ok,
    ).toBe(false);
    expect(strict('Party', '').ok).toBe(false);
    expect(strict('Bool', 'true').ok).toBe(false);
  });

  it('keeps nested Optionals in the array form at every level', () => {
    expect(strict('Optional (Optional Int64)', [])).toEqual({ ok: true, value: [] });
    expect(strict('Optional (Optional Int64)', [[]])).toEqual({ ok: true, value: [[]] });
    expect(strict('Optional (Optional Int64)', [['5']])).toEqual({ ok: true, value: [['5']] });
    expect(strict('Optional (Optional (Optional Text))', [[['a']]])).toEqual({
      ok: true,
      value: [[['a']]],
    });
    // CEL's null is None.
    expect(strict('Optional (Optional Int64)', null)).toEqual({ ok: true, value: [] });
    expect(strict('Optional (Optional Int64)', '5').ok).toBe(false);
    // Only directly nested Optionals are arrays.
    expect(strict('Optional (List (Optional Text))', [null, 'a'])).toEqual({
      ok: true,
      value: [null, 'a'],
    });
  });

  it('names missing and unexpected record fields like Canton', () => {
    const rec: DamlType = {
      kind: 'Record',
      fields: [
        { name: 'a', type: type('Text') },
        { name: 'b', type: type('Optional Text') },
      ],
    };
    expect(normalizeDamlValue(rec, {}, '', { round: false })).toEqual({
      ok: false,
      problem: { code: 'COMMAND_PREPROCESSING_FAILED', message: 'Missing non-optional fields: a' },
    });
    expect(normalizeDamlValue(rec, { a: 'x', c: 1 }, '', { round: false })).toEqual({
      ok: false,
      problem: { code: 'INVALID_ARGUMENT', message: 'Unexpected fields: c' },
    });
    expect(normalizeDamlValue(rec, { a: 'x' }, '', { round: false })).toEqual({
      ok: true,
      value: { a: 'x', b: null },
    });
  });
});
