import type { DamlType } from '../../daml-lf/daml-type.js';
import { encodePackage } from '../../daml-lf/encode-package.js';
import type { PackageSignature } from '../../daml-lf/package-signature.js';
import type { PackageArchive } from '../../daml-lf/read-dalf.js';

/** The type variable an archive writes where a model leaves a type open. */
const OPEN = { kind: 'Var', name: 'any' } as const satisfies DamlType;

function writable(type: DamlType): DamlType {
  switch (type.kind) {
    case 'Unsupported':
      return OPEN;
    case 'ContractId':
    case 'Optional':
    case 'List':
    case 'TextMap':
      return { kind: type.kind, of: writable(type.of) };
    case 'GenMap':
      return { kind: 'GenMap', key: writable(type.key), value: writable(type.value) };
    case 'Con':
      return { kind: 'Con', ref: type.ref, args: type.args.map(writable) };
    default:
      return type;
  }
}

const fieldsOf = <F extends { readonly type: DamlType }>(fields: readonly F[]): F[] =>
  fields.map((f) => ({ ...f, type: writable(f.type) }));

/**
 * The Daml-LF archive of a model's own package, made by the encoder from the model's signature
 * draft (self references with package id `''`): its id is the model's package id (the sha256 of
 * the archive's payload, as for any package), and the sandbox serves its payload at
 * `GET /v2/packages/{id}`. Deterministic: the same model file gives the same id.
 *
 * A type the model leaves open (a `ContractId` of no particular template, the result of a choice
 * without `returns`) is `Unsupported` in the signature, which no archive can hold: the archive
 * writes it as the type variable `any`, which a reader (and a rule check) takes for a type it
 * knows nothing about, as it does `Unsupported`.
 */
export function modelArchive(draft: PackageSignature): PackageArchive {
  return encodePackage({
    name: draft.name,
    version: draft.version,
    modules: draft.modules.map((m) => ({
      ...m,
      dataTypes: m.dataTypes.map((d) =>
        d.shape.kind === 'record'
          ? { ...d, shape: { kind: 'record', fields: fieldsOf(d.shape.fields) } }
          : d.shape.kind === 'variant'
            ? { ...d, shape: { kind: 'variant', constructors: fieldsOf(d.shape.constructors) } }
            : d,
      ),
      templates: m.templates.map((t) => ({
        ...t,
        fields: fieldsOf(t.fields),
        key: t.key === null ? null : writable(t.key),
        choices: t.choices.map((c) => ({
          ...c,
          argument: writable(c.argument),
          result: writable(c.result),
        })),
      })),
      interfaces: m.interfaces.map((i) => ({
        ...i,
        view: writable(i.view),
        choices: i.choices.map((c) => ({
          ...c,
          argument: writable(c.argument),
          result: writable(c.result),
        })),
      })),
    })),
  });
}
