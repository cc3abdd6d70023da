import { createHash } from 'node:crypto';
import type { DamlType, TypeConRef } from '../../src/daml-lf/daml-type.js';
import type {
  ChoiceSignature,
  DataTypeSignature,
  FieldSignature,
  InterfaceSignature,
  PackageSignature,
  TemplateSignature,
} from '../../src/daml-lf/package-signature.js';

/**
 * Package signatures written tersely, for rule-check tests that need what a sandbox model cannot
 * say (lists of records, variants, generic records, GenMaps, interface choices). References
 * inside one package are `con('Module:Entity')`; `pkg` fills in the package's id.
 */

export const T = {
  party: { kind: 'Party' },
  text: { kind: 'Text' },
  int: { kind: 'Int64' },
  bool: { kind: 'Bool' },
  date: { kind: 'Date' },
  time: { kind: 'Timestamp' },
  unit: { kind: 'Unit' },
  numeric: (scale: number | string): DamlType => ({
    kind: 'Numeric',
    scale: typeof scale === 'number' ? scale : { var: scale },
  }),
  opt: (of: DamlType): DamlType => ({ kind: 'Optional', of }),
  list: (of: DamlType): DamlType => ({ kind: 'List', of }),
  textMap: (of: DamlType): DamlType => ({ kind: 'TextMap', of }),
  genMap: (key: DamlType, value: DamlType): DamlType => ({ kind: 'GenMap', key, value }),
  cid: (of: DamlType): DamlType => ({ kind: 'ContractId', of }),
  v: (name: string): DamlType => ({ kind: 'Var', name }),
  nat: (value: number): DamlType => ({ kind: 'Nat', value }),
} as const satisfies Record<string, DamlType | ((...args: never[]) => DamlType)>;

/** A data type of the package being built (or of `packageId`). */
export function con(qualifiedName: string, args: DamlType[] = [], packageId = ''): DamlType {
  const [module, name] = qualifiedName.split(':') as [string, string];
  return { kind: 'Con', ref: { packageId, module, name }, args };
}

type Fields = Readonly<Record<string, DamlType>>;
type Choice = {
  readonly argument?: Fields | DamlType;
  readonly result?: DamlType;
  readonly consuming?: boolean;
};

export type Decl =
  | { readonly record: Fields; readonly params?: readonly string[] }
  | { readonly variant: Fields; readonly params?: readonly string[] }
  | { readonly enum: readonly string[] }
  | {
      readonly template: Fields;
      readonly choices?: Readonly<Record<string, Choice>>;
      readonly key?: DamlType;
      readonly implements?: readonly (string | TypeConRef)[];
    }
  | { readonly interface: DamlType; readonly choices?: Readonly<Record<string, Choice>> };

const fieldsOf = (fields: Fields): FieldSignature[] =>
  Object.entries(fields).map(([name, type]) => ({ name, type }));

/** A package signature: declarations by `Module:Entity`. */
export function pkg(
  name: string,
  version: string,
  decls: Readonly<Record<string, Decl>>,
): PackageSignature {
  const packageId = createHash('sha256').update(`${name}:${version}`).digest('hex');
  const self = (t: DamlType): DamlType => own(t, packageId);
  type MutableModule = {
    name: string;
    dataTypes: DataTypeSignature[];
    synonyms: [];
    templates: TemplateSignature[];
    interfaces: InterfaceSignature[];
  };
  const modules = new Map<string, MutableModule>();
  const moduleOf = (m: string): MutableModule => {
    let out = modules.get(m);
    if (out === undefined) {
      out = { name: m, dataTypes: [], synonyms: [], templates: [], interfaces: [] };
      modules.set(m, out);
    }
    return out;
  };
  const selfFields = (fields: Fields): FieldSignature[] =>
    fieldsOf(fields).map((f) => ({ name: f.name, type: self(f.type) }));
  for (const [qn, decl] of Object.entries(decls)) {
    const [module, entity] = qn.split(':') as [string, string];
    const m = moduleOf(module);
    const dataType = (shape: DataTypeSignature['shape'], params: readonly string[] = []) =>
      m.dataTypes.push({ name: entity, params, serializable: true, shape });
    const choicesOf = (choices: Readonly<Record<string, Choice>> = {}): ChoiceSignature[] =>
      Object.entries(choices).map(([choice, c]) => {
        let argument: DamlType;
        if (c.argument !== undefined && 'kind' in c.argument) {
          argument = self(c.argument as DamlType);
        } else {
          m.dataTypes.push({
            name: choice,
            params: [],
            serializable: true,
            shape: { kind: 'record', fields: selfFields(c.argument ?? {}) },
          });
          argument = con(`${module}:${choice}`, [], packageId);
        }
        return {
          name: choice,
          consuming: c.consuming ?? true,
          argument,
          result: self(c.result ?? T.unit),
        };
      });
    if ('record' in decl)
      dataType({ kind: 'record', fields: selfFields(decl.record) }, decl.params);
    else if ('variant' in decl)
      dataType({ kind: 'variant', constructors: selfFields(decl.variant) }, decl.params);
    else if ('enum' in decl) dataType({ kind: 'enum', constructors: decl.enum });
    else if ('template' in decl) {
      const fields = selfFields(decl.template);
      dataType({ kind: 'record', fields });
      m.templates.push({
        name: entity,
        fields,
        choices: [...choicesOf(decl.choices), ...choicesOf({ Archive: {} })],
        key: decl.key === undefined ? null : self(decl.key),
        implements: (decl.implements ?? []).map((i) =>
          typeof i === 'string'
            ? { packageId, module: i.split(':')[0]!, name: i.split(':')[1]! }
            : i,
        ),
      });
    } else {
      dataType({ kind: 'interface' });
      m.interfaces.push({
        name: entity,
        view: self(decl.interface),
        choices: choicesOf(decl.choices),
        requires: [],
      });
    }
  }
  return {
    packageId,
    name,
    version,
    lfVersion: '2.1',
    modules: [...modules.values()],
    dependencies: [],
  };
}

function own(t: DamlType, packageId: string): DamlType {
  switch (t.kind) {
    case 'Con':
      return {
        kind: 'Con',
        ref: t.ref.packageId === '' ? { ...t.ref, packageId } : t.ref,
        args: t.args.map((a) => own(a, packageId)),
      };
    case 'ContractId':
    case 'Optional':
    case 'List':
    case 'TextMap':
      return { kind: t.kind, of: own(t.of, packageId) };
    case 'GenMap':
      return { kind: 'GenMap', key: own(t.key, packageId), value: own(t.value, packageId) };
    default:
      return t;
  }
}
