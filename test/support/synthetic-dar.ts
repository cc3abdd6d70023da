import type { DamlType, TypeConRef } from '../../src/daml-lf/daml-type.js';
import { encodePackage, type PackageDraft } from '../../src/daml-lf/encode-package.js';
import { PackageCatalogue } from '../../src/daml-lf/package-catalogue.js';
import type { ChoiceSignature, FieldSignature } from '../../src/daml-lf/package-signature.js';
import type { PackageArchive } from '../../src/daml-lf/read-dalf.js';
import { writeDar } from '../../src/daml-lf/write-dar.js';

/**
 * DARs made by our own encoder, for tests that must run in a lone clone (the real DARs of
 * ../shared may not be copied into the repository).
 *
 * API:
 * - `syntheticDar(drafts?)` → `{ bytes, main, packages, catalogue }`: the drafts encoded in
 *   order (the last is the main package), written as one DAR. Without drafts: `SYNTHETIC_API`
 *   and `SYNTHETIC_ASSETS` (below), which between them have every kind of declaration.
 * - `encodeDrafts(drafts)` → `PackageArchive[]`: the same, without the DAR.
 * - In a draft, a type reference's `packageId` is `''` for the package itself, or `#name` for an
 *   earlier draft of the same call (replaced by that package's id once it is encoded), or a
 *   real id. `ref(packageId, 'Module', 'Entity')` writes one; `T` writes types
 *   (`T.optional(T.party)`, `T.con(ref(...), T.int)`, `T.numeric(10)`, ...); `record`,
 *   `choice` shorten data types and choices.
 *
 * The default packages, as Daml would declare them:
 *
 * ```daml
 * -- package synthetic-api 1.0.0
 * module Synthetic.Api where
 * data AssetView = AssetView with owner : Party; amount : Numeric 10; label : Optional Text
 * interface Asset where
 *   viewtype AssetView
 *   choice Asset_Transfer : ContractId Asset with newOwner : Party      -- consuming
 *   nonconsuming choice Asset_Describe : Text                            -- no fields
 *   choice Archive : ()                                                  -- consuming
 *
 * -- package synthetic-assets 1.0.0 (depends on synthetic-api)
 * module Synthetic.Assets where
 * data Color = Red | Green | Blue
 * data Shape = Circle (Numeric 10) | Square Int | NoShape ()
 * data Pair a b = Pair with first : a; second : b
 * template Token with
 *     issuer : Party; owner : Party; amount : Numeric 10; color : Color; shape : Shape
 *     tags : [Text]; meta : TextMap Text; note : Optional Text; pair : Pair Int Text
 *     expires : Optional Time; limits : Map Text Int; issued : Date; flag : Bool
 *   where
 *     key (issuer, owner) : Pair Party Party
 *     choice Token_Transfer : ContractId Token with newOwner : Party
 *     choice Token_Split : Pair (ContractId Token) (ContractId Token) with splitAmount : Numeric 10
 *     nonconsuming choice Token_Peek : Numeric 10
 *     choice Archive : ()
 *     interface instance Asset for Token
 * template Note with owner : Party; text : Text        -- no key, no interface
 *   where choice Archive : ()
 * ```
 */

export const T = {
  party: { kind: 'Party' },
  text: { kind: 'Text' },
  int: { kind: 'Int64' },
  bool: { kind: 'Bool' },
  date: { kind: 'Date' },
  time: { kind: 'Timestamp' },
  unit: { kind: 'Unit' },
  numeric: (scale: number): DamlType => ({ kind: 'Numeric', scale }),
  contractId: (of: DamlType): DamlType => ({ kind: 'ContractId', of }),
  optional: (of: DamlType): DamlType => ({ kind: 'Optional', of }),
  list: (of: DamlType): DamlType => ({ kind: 'List', of }),
  textMap: (of: DamlType): DamlType => ({ kind: 'TextMap', of }),
  genMap: (key: DamlType, value: DamlType): DamlType => ({ kind: 'GenMap', key, value }),
  con: (r: TypeConRef, ...args: DamlType[]): DamlType => ({ kind: 'Con', ref: r, args }),
  v: (name: string): DamlType => ({ kind: 'Var', name }),
} as const satisfies Record<string, DamlType | ((...args: never[]) => DamlType)>;

export function ref(packageId: string, module: string, name: string): TypeConRef {
  return { packageId, module, name };
}

/** A serializable record data type. */
export function record(name: string, fields: Record<string, DamlType>, params: string[] = []) {
  return {
    name,
    params,
    serializable: true,
    shape: { kind: 'record' as const, fields: fieldsOf(fields) },
  };
}

/** A choice whose argument is the record `module:name` (declare it with `record`). */
export function choice(
  module: string,
  name: string,
  result: DamlType,
  consuming = true,
): ChoiceSignature {
  return { name, consuming, argument: T.con(ref('', module, name)), result };
}

function fieldsOf(fields: Record<string, DamlType>): FieldSignature[] {
  return Object.entries(fields).map(([name, type]) => ({ name, type }));
}

const API = 'Synthetic.Api';
const ASSETS = 'Synthetic.Assets';
const asset = ref('#synthetic-api', API, 'Asset');
const here = (name: string): TypeConRef => ref('', ASSETS, name);

export const SYNTHETIC_API: PackageDraft = {
  name: 'synthetic-api',
  version: '1.0.0',
  modules: [
    {
      name: API,
      dataTypes: [
        record('AssetView', { owner: T.party, amount: T.numeric(10), label: T.optional(T.text) }),
        record('Asset_Transfer', { newOwner: T.party }),
        record('Asset_Describe', {}),
        record('Archive', {}),
        { name: 'Asset', params: [], serializable: false, shape: { kind: 'interface' } },
      ],
      synonyms: [],
      templates: [],
      interfaces: [
        {
          name: 'Asset',
          view: T.con(ref('', API, 'AssetView')),
          choices: [
            choice(API, 'Asset_Transfer', T.contractId(T.con(ref('', API, 'Asset')))),
            choice(API, 'Asset_Describe', T.text, false),
            choice(API, 'Archive', T.unit),
          ],
          requires: [],
        },
      ],
    },
  ],
};

const tokenFields = {
  issuer: T.party,
  owner: T.party,
  amount: T.numeric(10),
  color: T.con(here('Color')),
  shape: T.con(here('Shape')),
  tags: T.list(T.text),
  meta: T.textMap(T.text),
  note: T.optional(T.text),
  pair: T.con(here('Pair'), T.int, T.text),
  expires: T.optional(T.time),
  limits: T.genMap(T.text, T.int),
  issued: T.date,
  flag: T.bool,
};

export const SYNTHETIC_ASSETS: PackageDraft = {
  name: 'synthetic-assets',
  version: '1.0.0',
  modules: [
    {
      name: ASSETS,
      dataTypes: [
        {
          name: 'Color',
          params: [],
          serializable: true,
          shape: { kind: 'enum', constructors: ['Red', 'Green', 'Blue'] },
        },
        {
          name: 'Shape',
          params: [],
          serializable: true,
          shape: {
            kind: 'variant',
            constructors: fieldsOf({ Circle: T.numeric(10), Square: T.int, NoShape: T.unit }),
          },
        },
        record('Pair', { first: T.v('a'), second: T.v('b') }, ['a', 'b']),
        record('Token', tokenFields),
        record('Token_Transfer', { newOwner: T.party }),
        record('Token_Split', { splitAmount: T.numeric(10) }),
        record('Token_Peek', {}),
        record('Archive', {}),
        record('Note', { owner: T.party, text: T.text }),
      ],
      synonyms: [],
      templates: [
        {
          name: 'Token',
          fields: fieldsOf(tokenFields),
          choices: [
            choice(ASSETS, 'Token_Transfer', T.contractId(T.con(here('Token')))),
            choice(
              ASSETS,
              'Token_Split',
              T.con(
                here('Pair'),
                T.contractId(T.con(here('Token'))),
                T.contractId(T.con(here('Token'))),
              ),
            ),
            choice(ASSETS, 'Token_Peek', T.numeric(10), false),
            choice(ASSETS, 'Archive', T.unit),
          ],
          key: T.con(here('Pair'), T.party, T.party),
          implements: [asset],
        },
        {
          name: 'Note',
          fields: fieldsOf({ owner: T.party, text: T.text }),
          choices: [choice(ASSETS, 'Archive', T.unit)],
          key: null,
          implements: [],
        },
      ],
      interfaces: [],
    },
  ],
};

/** The drafts encoded in order, `#name` package ids replaced by earlier drafts' ids. */
export function encodeDrafts(drafts: readonly PackageDraft[]): PackageArchive[] {
  const ids = new Map<string, string>();
  const out: PackageArchive[] = [];
  for (const draft of drafts) {
    const resolve = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(resolve);
      if (value === null || typeof value !== 'object') return value;
      const copy: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        if (k === 'packageId' && typeof v === 'string' && v.startsWith('#')) {
          const id = ids.get(v.slice(1));
          if (id === undefined) throw new Error(`no earlier draft is named ${v.slice(1)}`);
          copy[k] = id;
        } else copy[k] = resolve(v);
      }
      return copy;
    };
    const archive = encodePackage(resolve(draft) as PackageDraft);
    ids.set(draft.name, archive.packageId);
    out.push(archive);
  }
  return out;
}

export type SyntheticDar = {
  /** The DAR file's bytes. */
  readonly bytes: Uint8Array;
  /** The main package (the last draft). */
  readonly main: PackageArchive;
  /** Every package, in draft order. */
  readonly packages: readonly PackageArchive[];
  /** A catalogue of the packages. */
  readonly catalogue: PackageCatalogue;
};

export function syntheticDar(
  drafts: readonly PackageDraft[] = [SYNTHETIC_API, SYNTHETIC_ASSETS],
): SyntheticDar {
  const packages = encodeDrafts(drafts);
  const main = packages[packages.length - 1]!;
  return {
    bytes: writeDar({ main, dependencies: packages.slice(0, -1) }),
    main,
    packages,
    catalogue: PackageCatalogue.create(packages.map((p) => p.signature)),
  };
}
