import { describe, expect, it } from 'vitest';
import type { DamlType as LfType } from '../../../src/daml-lf/daml-type.js';
import { PackageCatalogue } from '../../../src/daml-lf/package-catalogue.js';
import type {
  DataTypeSignature,
  PackageSignature,
} from '../../../src/daml-lf/package-signature.js';
import { decodeWireValue } from '../../../src/sandbox/model/decode-wire-value.js';
import type { DamlType } from '../../../src/sandbox/model/model-types.js';
import { normalizeDamlValue } from '../../../src/sandbox/model/normalize-daml-value.js';
import { formatDamlType } from '../../../src/sandbox/model/parse-daml-type.js';
import { trimTrailingNones } from '../../../src/sandbox/model/trim-trailing-nones.js';
import { ValueTypes } from '../../../src/sandbox/model/value-types.js';

const PKG = 'a'.repeat(64);
const con = (name: string, args: LfType[] = [], packageId = PKG): LfType => ({
  kind: 'Con',
  ref: { packageId, module: 'Shapes', name },
  args,
});
const v = (name: string): LfType => ({ kind: 'Var', name });
const int: LfType = { kind: 'Int64' };
const text: LfType = { kind: 'Text' };

const dataTypes: DataTypeSignature[] = [
  {
    name: 'Pair',
    params: ['a', 'b'],
    serializable: true,
    shape: {
      kind: 'record',
      fields: [
        { name: 'left', type: v('a') },
        { name: 'right', type: v('b') },
        { name: 'note', type: { kind: 'Optional', of: text } },
      ],
    },
  },
  // data Tree = Leaf | Node with left: Tree, value: Int, right: Tree (recursive, via a record)
  {
    name: 'Tree',
    params: [],
    serializable: true,
    shape: {
      kind: 'variant',
      constructors: [
        { name: 'Leaf', type: { kind: 'Unit' } },
        { name: 'Node', type: con('Tree.Node') },
      ],
    },
  },
  {
    name: 'Tree.Node',
    params: [],
    serializable: true,
    shape: {
      kind: 'record',
      fields: [
        { name: 'left', type: con('Tree') },
        { name: 'value', type: int },
        { name: 'right', type: con('Tree') },
        { name: 'label', type: { kind: 'Optional', of: text } },
      ],
    },
  },
  {
    name: 'Color',
    params: [],
    serializable: true,
    shape: { kind: 'enum', constructors: ['Red', 'Green', 'Blue'] },
  },
  { name: 'Holding', params: [], serializable: false, shape: { kind: 'interface' } },
];

const SHAPES: PackageSignature = {
  packageId: PKG,
  name: 'shapes',
  version: '1.0.0',
  lfVersion: '2.1',
  modules: [{ name: 'Shapes', dataTypes, synonyms: [], templates: [], interfaces: [] }],
  dependencies: [],
};

const types = new ValueTypes(PackageCatalogue.create([SHAPES]));
const strict = (t: DamlType, value: unknown) => normalizeDamlValue(t, value, 'x', { round: false });

describe('ValueTypes: a catalogue’s types as the sandbox checks values against them', () => {
  it('substitutes the type arguments of a generic record', () => {
    const pair = types.of(con('Pair', [int, { kind: 'Numeric', scale: 2 }]));
    expect(formatDamlType(pair)).toBe('Shapes:Pair Int (Numeric 2)');
    expect(strict(pair, { left: '3', right: '1.5' })).toEqual({
      ok: true,
      value: { left: '3', right: '1.50', note: null },
    });
    expect(strict(pair, { left: 'x', right: '1' }).ok).toBe(false);
    // One object per instance: the codecs cache their work per type object.
    expect(types.of(con('Pair', [int, { kind: 'Numeric', scale: 2 }]))).toBe(pair);
  });

  it('writes a recursive variant out as a cyclic graph, and values of it check to any depth', () => {
    const tree = types.of(con('Tree'));
    expect(tree.kind).toBe('Variant');
    const node = (tree as DamlType & { kind: 'Variant' }).constructors[1]!.type;
    expect((node as DamlType & { kind: 'Record' }).fields[0]!.type).toBe(tree);
    const leaf = { tag: 'Leaf', value: {} };
    const value = {
      tag: 'Node',
      value: {
        left: leaf,
        value: '1',
        right: { tag: 'Node', value: { left: leaf, value: '2', right: leaf } },
      },
    };
    const decoded = decodeWireValue(tree, value);
    expect(decoded.ok).toBe(true);
    const normal = strict(tree, decoded.ok ? decoded.value : null);
    expect(normal.ok).toBe(true);
    // The wire leaves out each record's trailing None (`label`), at every depth.
    expect(trimTrailingNones(tree, normal.ok ? normal.value : null)).toEqual(value);
  });

  it('reads variants as Canton does: {tag, value}, 400 without both or with an unknown tag', () => {
    const tree = types.of(con('Tree'));
    expect(decodeWireValue(tree, { tag: 'Leaf' })).toEqual({
      ok: false,
      failure: {
        kind: 'illegal-argument',
        message: "Variant type json must have 'tag' and 'value' fields.",
      },
    });
    expect(decodeWireValue(tree, { tag: 'Twig', value: {} })).toEqual({
      ok: false,
      failure: { kind: 'illegal-argument', message: 'Unexpected variant tag: Twig' },
    });
    expect(decodeWireValue(tree, { tag: 1, value: {} })).toMatchObject({
      ok: false,
      failure: { kind: 'internal', message: 'Expected ujson.Str (data: 1)' },
    });
  });

  it('refuses a value nested deeper than Daml-LF allows (100 levels)', () => {
    const tree = types.of(con('Tree'));
    let deep: unknown = { tag: 'Leaf', value: {} };
    for (let i = 0; i < 60; i++) {
      deep = { tag: 'Node', value: { left: deep, value: '1', right: { tag: 'Leaf', value: {} } } };
    }
    expect(decodeWireValue(tree, deep)).toEqual({
      ok: false,
      failure: {
        kind: 'nesting',
        message: 'Provided value exceeds maximum nesting level of 100',
      },
    });
  });

  it('reads GenMap as [[k, v], …] and holds it sorted by key, the last entry of a key winning', () => {
    const map: DamlType = types.of({ kind: 'GenMap', key: con('Color'), value: int });
    expect(formatDamlType(map)).toBe('Map Shapes:Color Int64');
    const decoded = decodeWireValue(map, [
      ['Blue', '3'],
      ['Red', '1'],
      ['Blue', '4'],
    ]);
    expect(decoded.ok).toBe(true);
    expect(strict(map, decoded.ok ? decoded.value : null)).toEqual({
      ok: true,
      value: [
        ['Red', '1'],
        ['Blue', '4'],
      ],
    });
    expect(decodeWireValue(map, [['Red']])).toEqual({
      ok: false,
      failure: {
        kind: 'internal',
        message: '1 is out of bounds (min 0, max 0)',
        exception: 'java.lang.IndexOutOfBoundsException',
      },
    });
    expect(decodeWireValue(map, { Red: '1' })).toMatchObject({
      ok: false,
      failure: { kind: 'internal', message: 'Expected ujson.Arr (data: {"Red":"1"})' },
    });
    const numbers = types.of({ kind: 'GenMap', key: int, value: text });
    expect(
      strict(numbers, [
        ['10', 'b'],
        ['9', 'a'],
        ['-1', 'z'],
      ]),
    ).toEqual({
      ok: true,
      value: [
        ['-1', 'z'],
        ['9', 'a'],
        ['10', 'b'],
      ],
    });
  });

  it('makes interfaces, type variables and unknown packages Unsupported: no value fits', () => {
    const iface = types.of(con('Holding'));
    expect(iface).toEqual({ kind: 'Unsupported', text: 'Shapes:Holding (an interface value)' });
    expect(strict(iface, {}).ok).toBe(false);
    expect(decodeWireValue(iface, {})).toMatchObject({ ok: false, failure: { kind: 'internal' } });
    expect(types.of(v('a')).kind).toBe('Unsupported');
    const missing = types.of(con('Gone', [], 'b'.repeat(64)));
    expect(missing.kind).toBe('Unsupported');
    expect(formatDamlType(missing)).toContain('not loaded');
    expect(types.of({ kind: 'ContractId', of: con('Holding') })).toEqual({
      kind: 'ContractId',
      template: 'Shapes:Holding',
    });
  });
});
