import { describe, expect, it } from 'vitest';
import { decodeWireValue } from '../../../src/sandbox/model/decode-wire-value.js';
import type { DamlType } from '../../../src/sandbox/model/model-types.js';
import { parseDamlType } from '../../../src/sandbox/model/parse-daml-type.js';

function type(text: string): DamlType {
  const t = parseDamlType(text);
  if ('problem' in t) throw new Error(t.problem);
  return t;
}

const decode = (t: string | DamlType, v: unknown) =>
  decodeWireValue(typeof t === 'string' ? type(t) : t, v);

/** What Canton 3.5's JsonCodec throws, and so how Endpoints.handleError answers. */
const internal = (message: string, exception = 'ujson.Value$InvalidData') => ({
  ok: false,
  failure: { kind: 'internal', message, exception },
});

const rec: DamlType = {
  kind: 'Record',
  fields: [
    { name: 'a', type: type('Text') },
    { name: 'b', type: type('Int64') },
    { name: 'c', type: type('Optional Text') },
  ],
};

describe('decodeWireValue (Canton 3.5 JsonCodec input)', () => {
  it('reads Int64 from strings only: a number is an internal error (500)', () => {
    expect(decode('Int64', '42')).toEqual({ ok: true, value: '42' });
    expect(decode('Int64', '+42')).toEqual({ ok: true, value: '42' });
    expect(decode('Int64', 42)).toEqual(internal('Expected ujson.Str (data: 42)'));
    // Long.parseLong's NumberFormatException is an IllegalArgumentException: 400.
    expect(decode('Int64', 'seven')).toEqual({
      ok: false,
      failure: { kind: 'illegal-argument', message: 'For input string: "seven"' },
    });
    expect(decode('Int64', '9223372036854775808')).toMatchObject({
      ok: false,
      failure: { kind: 'illegal-argument' },
    });
  });

  it('reads Numeric from strings and numbers; anything else is an IllegalArgumentException', () => {
    expect(decode('Numeric 2', '1.5')).toEqual({ ok: true, value: '1.5' });
    expect(decode('Numeric 2', 1.5)).toEqual({ ok: true, value: '1.5' });
    expect(decode('Numeric 2', 100)).toEqual({ ok: true, value: '100.0' });
    expect(decode('Numeric 2', true)).toEqual({
      ok: false,
      failure: { kind: 'illegal-argument', message: 'true is not a valid numeric value' },
    });
  });

  it('refuses JSON of the wrong kind as an internal error', () => {
    expect(decode('Text', 5)).toEqual(internal('Expected ujson.Str (data: 5)'));
    expect(decode('Party', null)).toEqual(internal('Expected ujson.Str (data: null)'));
    expect(decode('Bool', 'true')).toEqual(internal('Expected ujson.Bool (data: "true")'));
    expect(decode('List Text', 'a')).toEqual(internal('Expected ujson.Arr (data: "a")'));
    expect(decode('TextMap Text', [])).toEqual(internal('Expected ujson.Obj (data: [])'));
    expect(decode(rec, 'x')).toEqual(internal('Expected ujson.Obj (data: "x")'));
  });

  it('refuses a Date given as a timestamp, a bad time and an unknown enum constructor (500)', () => {
    expect(decode('Date', '2025-01-27')).toEqual({ ok: true, value: '2025-01-27' });
    expect(decode('Date', '2025-01-27T00:00:00Z')).toEqual(
      internal(
        "Text '2025-01-27T00:00:00Z' could not be parsed, unparsed text found at index 10",
        'java.time.format.DateTimeParseException',
      ),
    );
    expect(decode('Date', '2025-02-30')).toMatchObject({
      ok: false,
      failure: { kind: 'internal' },
    });
    expect(decode('Time', '2025-01-27')).toMatchObject({
      ok: false,
      failure: { kind: 'internal' },
    });
    expect(decode('Time', '2025-01-27T15:30:37.500Z')).toEqual({
      ok: true,
      value: '2025-01-27T15:30:37.5Z',
    });
    expect(decode({ kind: 'Enum', constructors: ['Low', 'High'] }, 'High')).toEqual({
      ok: true,
      value: 'High',
    });
    expect(decode({ kind: 'Enum', constructors: ['Low', 'High'] }, 'Medium')).toEqual(
      internal('Unexpected case: Medium', 'java.lang.Exception'),
    );
  });

  it('checks records: missing non-optional fields first, then unexpected non-null ones', () => {
    expect(decode(rec, { a: 'x', b: '1' })).toEqual({
      ok: true,
      value: { a: 'x', b: '1', c: null },
    });
    expect(decode(rec, { c: 'x' })).toEqual({
      ok: false,
      failure: { kind: 'missing-fields', fields: ['a', 'b'] },
    });
    expect(decode(rec, { a: 'x', b: '1', d: 1, e: 'y' })).toEqual({
      ok: false,
      failure: { kind: 'unexpected-fields', fields: ['d', 'e'] },
    });
    // A null-valued unknown field is ignored; a present null for a Text is the wrong kind.
    expect(decode(rec, { a: 'x', b: '1', d: null }).ok).toBe(true);
    expect(decode(rec, { a: null, b: '1' })).toEqual(internal('Expected ujson.Str (data: null)'));
  });

  it('reads nested Optionals as arrays at every level; such a field cannot be null', () => {
    const t = 'Optional (Optional Int64)';
    expect(decode(t, [])).toEqual({ ok: true, value: [] });
    expect(decode(t, [[]])).toEqual({ ok: true, value: [[]] });
    expect(decode(t, [['5']])).toEqual({ ok: true, value: [['5']] });
    expect(decode(t, [[5]])).toEqual(internal('Expected ujson.Str (data: 5)'));
    expect(decode(t, null)).toEqual(internal('Expected ujson.Arr (data: null)'));
    const withNested: DamlType = {
      kind: 'Record',
      fields: [{ name: 'm', type: type(t) }],
    };
    expect(decode(withNested, {})).toEqual(internal('Expected ujson.Arr (data: null)'));
    expect(decode('Optional Text', null)).toEqual({ ok: true, value: null });
  });

  it('ignores a Unit value entirely, as Canton does', () => {
    expect(decode('Unit', {})).toEqual({ ok: true, value: {} });
    expect(decode('Unit', 5)).toEqual({ ok: true, value: {} });
  });
});
