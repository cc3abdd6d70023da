import { describe, expect, it } from 'vitest';
import { DAML_VALUE_FIELDS, parseWireJson } from '../../../src/ledger/wire/parse-wire-json.js';

const parse = (value: unknown): unknown => parseWireJson(JSON.stringify(value));

describe('parseWireJson', () => {
  it('drops null fields of API structures, at any depth, in objects inside arrays too', () => {
    expect(
      parse({
        a: null,
        b: 1,
        nested: { c: null, d: 'x', deeper: [{ e: null, f: false }] },
        list: [{ g: null }],
      }),
    ).toEqual({ b: 1, nested: { d: 'x', deeper: [{ f: false }] }, list: [{}] });
  });

  it('keeps nulls that are array elements (positions matter)', () => {
    expect(parse({ resources: [['CONTRACT_ID', null]], xs: [null, 1] })).toEqual({
      resources: [['CONTRACT_ID', null]],
      xs: [null, 1],
    });
  });

  it('keeps Daml values verbatim, nulls at every depth included', () => {
    const value = { a: null, r: { b: null, l: [null, { c: null }] }, o: [[]] };
    for (const field of DAML_VALUE_FIELDS) {
      expect(parse({ [field]: value, other: null })).toEqual({ [field]: value });
    }
  });

  it('drops a whole-value null contractKey and viewValue ("none"), keeps exerciseResult null (None)', () => {
    expect(parse({ contractKey: null, viewValue: null, exerciseResult: null, x: 1 })).toEqual({
      exerciseResult: null,
      x: 1,
    });
  });

  it('leaves scalars and top-level null alone, and keeps a "__proto__" key as data', () => {
    expect(parseWireJson('null')).toBeNull();
    expect(parseWireJson('"s"')).toBe('s');
    const o = parseWireJson('{"__proto__": {"polluted": true}, "n": null}') as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(o)).toBe(Object.prototype);
    expect(Object.keys(o)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('throws on text that is not JSON', () => {
    expect(() => parseWireJson('<html>')).toThrow(SyntaxError);
  });
});
