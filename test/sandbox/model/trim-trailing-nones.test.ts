import { describe, expect, it } from 'vitest';
import type { DamlType } from '../../../src/sandbox/model/model-types.js';
import { parseDamlType } from '../../../src/sandbox/model/parse-daml-type.js';
import { trimTrailingNones } from '../../../src/sandbox/model/trim-trailing-nones.js';

function type(text: string): DamlType {
  const t = parseDamlType(text);
  if ('problem' in t) throw new Error(t.problem);
  return t;
}

const inner: DamlType = {
  kind: 'Record',
  fields: [
    { name: 'x', type: type('Text') },
    { name: 'y', type: type('Optional Text') },
  ],
};
const outer: DamlType = {
  kind: 'Record',
  fields: [
    { name: 'a', type: type('Optional Text') },
    { name: 'b', type: type('Int64') },
    { name: 'inner', type: inner },
    { name: 'list', type: { kind: 'List', of: inner } },
    { name: 'map', type: { kind: 'TextMap', of: type('Optional Text') } },
    { name: 'nested', type: type('Optional (Optional Text)') },
    { name: 'c', type: type('Optional Text') },
    { name: 'd', type: type('Optional Text') },
  ],
};

describe('trimTrailingNones (removeTrailingNonesInRecords)', () => {
  it('leaves out trailing None fields of every record, keeps earlier ones as null', () => {
    const value = {
      a: null,
      b: '1',
      inner: { x: 'i', y: null },
      list: [
        { x: 'l1', y: null },
        { x: 'l2', y: 'v' },
      ],
      map: { k: null },
      nested: [],
      c: null,
      d: null,
    };
    expect(trimTrailingNones(outer, value)).toEqual({
      a: null,
      b: '1',
      inner: { x: 'i' },
      list: [{ x: 'l1' }, { x: 'l2', y: 'v' }],
      // A TextMap's null values are not record fields.
      map: { k: null },
      // A nested Optional's None is [], not null: it stays, and ends the trimming.
      nested: [],
    });
  });

  it('trims everything after the last non-None field, and records inside Optionals', () => {
    const t: DamlType = {
      kind: 'Record',
      fields: [
        { name: 'o', type: { kind: 'Optional', of: inner } },
        { name: 'z', type: type('Optional Text') },
      ],
    };
    expect(trimTrailingNones(t, { o: { x: 'a', y: null }, z: null })).toEqual({ o: { x: 'a' } });
    expect(trimTrailingNones(t, { o: null, z: null })).toEqual({});
  });

  it('returns values of types without Optional fields as they are', () => {
    const t: DamlType = { kind: 'Record', fields: [{ name: 'x', type: type('Text') }] };
    const v = { x: 'a' };
    expect(trimTrailingNones(t, v)).toBe(v);
  });
});
