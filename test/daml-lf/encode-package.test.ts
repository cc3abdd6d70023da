import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { encodePackage, type PackageDraft } from '../../src/daml-lf/encode-package.js';
import type { PackageSignature } from '../../src/daml-lf/package-signature.js';
import { readDalf, readPackagePayload } from '../../src/daml-lf/read-dalf.js';
import { readDar } from '../../src/daml-lf/read-dar.js';
import { writeDar } from '../../src/daml-lf/write-dar.js';
import { SHARED_DIR, skipWithoutShared } from '../support/shared-files.js';
import { errorOf } from './error-of.js';
import {
  SYNTHETIC_API,
  SYNTHETIC_ASSETS,
  T,
  encodeDrafts,
  record,
  ref,
  syntheticDar,
} from '../support/synthetic-dar.js';

/** The signature with references to itself written `''`, as a draft writes them. */
function asDraft(sig: PackageSignature): PackageDraft & Pick<PackageSignature, 'dependencies'> {
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        k === 'packageId' && v === sig.packageId ? '' : rewrite(v),
      ]),
    );
  };
  return rewrite({
    name: sig.name,
    version: sig.version,
    modules: sig.modules,
    dependencies: sig.dependencies,
  }) as PackageDraft & Pick<PackageSignature, 'dependencies'>;
}

describe('encodePackage: a package draft as a Daml-LF 2.1 archive', () => {
  const [api, assets] = encodeDrafts([SYNTHETIC_API, SYNTHETIC_ASSETS]);

  it('reads back as the draft: encode → read gives the same signature', () => {
    for (const [draft, archive] of [
      [SYNTHETIC_API, api!],
      [SYNTHETIC_ASSETS, assets!],
    ] as const) {
      const read = readDalf(archive.bytes, { source: 'encoded.dalf' });
      expect(read.signature).toEqual(archive.signature);
      expect(read.signature.lfVersion).toBe('2.1');
      expect(read.packageId).toMatch(/^[0-9a-f]{64}$/);
      const back = asDraft(read.signature);
      const expected = JSON.parse(
        JSON.stringify(draft).replaceAll('"#synthetic-api"', `"${api!.packageId}"`),
      ) as PackageDraft;
      expect({ name: back.name, version: back.version, modules: back.modules }).toEqual(expected);
    }
    expect(assets!.signature.dependencies).toEqual([api!.packageId]);
    expect(api!.signature.dependencies).toEqual([]);
  });

  it('resolves self references to the new id, and references to others as given', () => {
    const token = assets!.signature.modules[0]!.templates[0]!;
    expect(token.implements).toEqual([
      { packageId: api!.packageId, module: 'Synthetic.Api', name: 'Asset' },
    ]);
    expect(token.key).toEqual(
      T.con(ref(assets!.packageId, 'Synthetic.Assets', 'Pair'), T.party, T.party),
    );
  });

  it('is deterministic, and the id is the sha256 of the payload', () => {
    const again = encodePackage(SYNTHETIC_API);
    expect(Buffer.from(again.bytes).equals(Buffer.from(api!.bytes))).toBe(true);
    expect(
      readPackagePayload(api!.payload, { source: 'payload', packageId: api!.packageId }),
    ).toMatchObject({ packageId: api!.packageId, signature: api!.signature });
  });

  it('adds the record of a template and the data type of an interface the draft leaves out', () => {
    const archive = encodePackage({
      name: 'implicit',
      version: '0.1.0',
      modules: [
        {
          name: 'M',
          dataTypes: [record('V', { n: T.int })],
          synonyms: [],
          templates: [
            {
              name: 'T',
              fields: [{ name: 'p', type: T.party }],
              choices: [],
              key: null,
              implements: [],
            },
          ],
          interfaces: [{ name: 'I', view: T.con(ref('', 'M', 'V')), choices: [], requires: [] }],
        },
      ],
    });
    const dataTypes = archive.signature.modules[0]!.dataTypes;
    expect(dataTypes.map((d) => [d.name, d.shape.kind, d.serializable])).toEqual([
      ['V', 'record', true],
      ['T', 'record', true],
      ['I', 'interface', false],
    ]);
  });

  it('writes generic types with a Numeric scale parameter and type synonyms', () => {
    const archive = encodePackage({
      name: 'generic',
      version: '1.0.0',
      modules: [
        {
          name: 'G',
          dataTypes: [record('Amount', { value: { kind: 'Numeric', scale: { var: 'n' } } }, ['n'])],
          synonyms: [
            {
              name: 'Money',
              params: [],
              type: T.con(ref('', 'G', 'Amount'), { kind: 'Nat', value: 2 }),
            },
          ],
          templates: [],
          interfaces: [],
        },
      ],
    });
    const m = archive.signature.modules[0]!;
    expect(m.dataTypes[0]!.shape).toEqual({
      kind: 'record',
      fields: [{ name: 'value', type: { kind: 'Numeric', scale: { var: 'n' } } }],
    });
    expect(m.synonyms[0]!.type).toEqual(
      T.con(ref(archive.packageId, 'G', 'Amount'), { kind: 'Nat', value: 2 }),
    );
  });

  it('refuses a draft it cannot write, saying what is wrong', () => {
    const module = (over: Partial<PackageDraft['modules'][number]>): PackageDraft => ({
      name: 'bad',
      version: '1.0.0',
      modules: [{ name: 'M', dataTypes: [], synonyms: [], templates: [], interfaces: [], ...over }],
    });
    const cases: [PackageDraft, RegExp][] = [
      [
        module({ dataTypes: [record('R', { x: T.con(ref('', 'M', 'Missing')) })] }),
        /refers to M:Missing, which the draft does not declare/,
      ],
      [
        module({ dataTypes: [record('R', { x: { kind: 'Unsupported', text: 'a -> b' } })] }),
        /cannot be written: a -> b/,
      ],
      [
        module({ dataTypes: [record('R', { x: T.con(ref('xyz', 'M', 'R')) })] }),
        /refers to package "xyz", which is not a package id/,
      ],
      [module({ name: 'A..B' }), /"A..B" is not a dotted name/],
      [
        module({
          dataTypes: [record('T', { p: T.party })],
          templates: [
            {
              name: 'T',
              fields: [{ name: 'q', type: T.party }],
              choices: [],
              key: null,
              implements: [],
            },
          ],
        }),
        /template T.*fields differ from its record's/,
      ],
      [{ ...module({}), version: '' }, /name and version must be set/],
    ];
    for (const [draft, message] of cases) {
      const err = errorOf(() => encodePackage(draft));
      expect(err.code, String(message)).toBe('INVALID_DRAFT');
      expect(err.message).toMatch(message);
      expect(err.message).toMatch(/^package draft bad-/);
    }
  });
});

describe('writeDar: packages as a DAR', () => {
  it('reads back with readDar: the main package first, every package once', async () => {
    const dar = syntheticDar();
    const read = await readDar(dar.bytes, { source: 'synthetic.dar' });
    expect(read.mainPackageId).toBe(dar.main.packageId);
    expect(read.packages.map((p) => p.packageId)).toEqual(
      [dar.main, ...dar.packages.slice(0, -1)].map((p) => p.packageId),
    );
    expect(read.packages.map((p) => p.signature)).toEqual(
      [dar.main, ...dar.packages.slice(0, -1)].map((p) => p.signature),
    );
    expect(Buffer.from(syntheticDar().bytes).equals(Buffer.from(dar.bytes))).toBe(true);
  });

  it('leaves out a dependency given twice or equal to the main package', async () => {
    const [api, assets] = encodeDrafts([SYNTHETIC_API, SYNTHETIC_ASSETS]);
    const bytes = writeDar({ main: assets!, dependencies: [api!, api!, assets!] });
    const read = await readDar(bytes, { source: 'twice.dar' });
    expect(read.packages.map((p) => p.signature.name)).toEqual([
      'synthetic-assets',
      'synthetic-api',
    ]);
  });
});

describe.skipIf(skipWithoutShared('daml-lf/dars/splice-amulet-0.1.14.dar'))(
  'encodePackage on the real packages',
  () => {
    it('re-encodes every package without function types to the same signature', async () => {
      let reencoded = 0;
      for (const name of ['all-kinds-of', 'DamlDefinitionsServiceMain', 'splice-amulet-0.1.14']) {
        const file = `${SHARED_DIR}daml-lf/dars/${name}.dar`;
        const dar = await readDar(readFileSync(file), { source: file });
        for (const p of dar.packages) {
          const hasUnsupported = JSON.stringify(p.signature.modules).includes('"Unsupported"');
          if (hasUnsupported) continue;
          const again = encodePackage(asDraft(p.signature));
          expect(asDraft(again.signature), p.signature.name).toEqual(asDraft(p.signature));
          reencoded++;
        }
      }
      expect(reencoded).toBeGreaterThan(60);
    });
  },
);
