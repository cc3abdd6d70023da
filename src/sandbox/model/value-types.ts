import { showType, type DamlType as LfType } from '../../daml-lf/daml-type.js';
import type { PackageCatalogue } from '../../daml-lf/package-catalogue.js';
import type { FieldSignature } from '../../daml-lf/package-signature.js';
import type { DamlType, FieldDef } from './model-types.js';

/** A bound on distinct data type instances, against a type that grows as it recurses. */
const MAX_INSTANCES = 50_000;

function typeKey(t: LfType): string {
  switch (t.kind) {
    case 'Con':
      return `${t.ref.packageId}:${t.ref.module}:${t.ref.name}(${t.args.map(typeKey).join(',')})`;
    case 'Numeric':
      return `Numeric ${typeof t.scale === 'number' ? t.scale : t.scale.var}`;
    case 'ContractId':
    case 'Optional':
    case 'List':
    case 'TextMap':
      return `${t.kind}(${typeKey(t.of)})`;
    case 'GenMap':
      return `GenMap(${typeKey(t.key)},${typeKey(t.value)})`;
    case 'Var':
      return `'${t.name}`;
    case 'Nat':
      return String(t.value);
    case 'Unsupported':
      return `?${t.text}`;
    default:
      return t.kind;
  }
}

/**
 * The value types (model-types.ts) of a catalogue's signature types: what the sandbox checks a
 * DAR template's create and choice arguments against, with the same checker and wire codec as a
 * model's (normalizeDamlValue, decodeWireValue, trimTrailingNones). Each data type is looked up
 * once (`PackageCatalogue.resolve`, type arguments substituted) and written out as a record,
 * variant or enum; a recursive type becomes a cyclic graph, built lazily so that it ends.
 * Interfaces, type variables and types of packages that were not read become `Unsupported`: no
 * command can give a value of them.
 */
export class ValueTypes {
  readonly #catalogue: PackageCatalogue;
  readonly #instances = new Map<string, DamlType>();

  constructor(catalogue: PackageCatalogue) {
    this.#catalogue = catalogue;
  }

  of(type: LfType): DamlType {
    switch (type.kind) {
      case 'Party':
      case 'Text':
      case 'Int64':
      case 'Bool':
      case 'Date':
      case 'Timestamp':
      case 'Unit':
        return { kind: type.kind };
      case 'Numeric':
        return typeof type.scale === 'number'
          ? { kind: 'Numeric', scale: type.scale }
          : { kind: 'Unsupported', text: showType(type) };
      case 'ContractId':
        return {
          kind: 'ContractId',
          template: type.of.kind === 'Con' ? `${type.of.ref.module}:${type.of.ref.name}` : null,
        };
      case 'Optional':
      case 'List':
      case 'TextMap':
        return { kind: type.kind, of: this.of(type.of) };
      case 'GenMap':
        return { kind: 'GenMap', key: this.of(type.key), value: this.of(type.value) };
      case 'Con':
        return this.#dataType(type);
      case 'Var':
        return { kind: 'Unsupported', text: `the type variable ${type.name}` };
      case 'Nat':
      case 'Unsupported':
        return { kind: 'Unsupported', text: showType(type) };
    }
  }

  /** The fields of a record, resolved (a template's, a choice argument's, a view's). */
  fields(fields: readonly FieldSignature[]): FieldDef[] {
    return fields.map((f) => ({ name: f.name, type: this.of(f.type) }));
  }

  #dataType(type: LfType & { readonly kind: 'Con' }): DamlType {
    const key = typeKey(type);
    const known = this.#instances.get(key);
    if (known !== undefined) return known;
    const name = showType(type, { qualify: true });
    if (this.#instances.size >= MAX_INSTANCES) {
      return { kind: 'Unsupported', text: `${name} (too many instances of recursive types)` };
    }
    const resolved = this.#catalogue.resolve(type);
    switch (resolved.kind) {
      case 'Record': {
        // Registered before its fields are resolved, so a field of the same type finds it.
        const fields: FieldDef[] = [];
        const out: DamlType = { kind: 'Record', fields, name };
        this.#instances.set(key, out);
        fields.push(...this.fields(resolved.fields));
        return out;
      }
      case 'Variant': {
        const constructors: FieldDef[] = [];
        const out: DamlType = { kind: 'Variant', constructors, name };
        this.#instances.set(key, out);
        constructors.push(...this.fields(resolved.constructors));
        return out;
      }
      case 'Enum': {
        const out: DamlType = { kind: 'Enum', constructors: resolved.constructors, name };
        this.#instances.set(key, out);
        return out;
      }
      case 'Interface':
        return { kind: 'Unsupported', text: `${name} (an interface value)` };
      case 'Unknown':
        return {
          kind: 'Unsupported',
          text: `${name} (of package ${resolved.ref.packageId}, which is not loaded)`,
        };
      default:
        return this.of(resolved);
    }
  }
}
