import { create, toBinary } from '@bufbuild/protobuf';
import type { DamlType, TypeConRef } from './daml-type.js';
import { DamlLfError } from './daml-lf-error.js';
import {
  BuiltinType,
  InternedDottedNameSchema,
  SelfOrImportedPackageIdSchema,
  TypeConIdSchema,
  TypeSchema,
  Type_BuiltinSchema,
  Type_ConSchema,
  Type_VarSchema,
  type InternedDottedName,
  type Type,
  type TypeConId,
} from './generated/daml_lf2_pb.js';
import { isPackageId } from './package-names.js';

const PRIMITIVES = {
  Party: BuiltinType.PARTY,
  Text: BuiltinType.TEXT,
  Int64: BuiltinType.INT64,
  Bool: BuiltinType.BOOL,
  Date: BuiltinType.DATE,
  Timestamp: BuiltinType.TIMESTAMP,
  Unit: BuiltinType.UNIT,
} as const;

const CONTAINERS = {
  ContractId: BuiltinType.CONTRACT_ID,
  Optional: BuiltinType.OPTIONAL,
  List: BuiltinType.LIST,
  TextMap: BuiltinType.TEXTMAP,
} as const;

/**
 * The interning tables of a package being encoded, filled as the encoder names things: strings,
 * dotted names and types, each entry once. Types are written the way the Daml compiler writes
 * them: every type, and every type inside one, is an index into `interned_types`, whose entries
 * only refer to earlier ones. A reference whose package id is `''` is to the package itself.
 */
export class InternTables {
  readonly strings: string[] = [];
  readonly dottedNames: InternedDottedName[] = [];
  /** Encoded `Type` messages (the reader's schema reads the table as bytes). */
  readonly types: Uint8Array[] = [];
  readonly #strings = new Map<string, number>();
  readonly #dotted = new Map<string, number>();
  readonly #types = new Map<string, number>();
  readonly #source: string;

  constructor(source: string) {
    this.#source = source;
  }

  string(text: string): number {
    let index = this.#strings.get(text);
    if (index === undefined) {
      index = this.strings.push(text) - 1;
      this.#strings.set(text, index);
    }
    return index;
  }

  /** A dotted name (`Splice.Api.Token`), each segment non-empty. */
  dotted(name: string, what: string): number {
    const segments = name.split('.');
    if (segments.some((s) => s === '')) this.invalid(`${what} "${name}" is not a dotted name`);
    let index = this.#dotted.get(name);
    if (index === undefined) {
      const segmentsInternedStr = segments.map((s) => this.string(s));
      index = this.dottedNames.push(create(InternedDottedNameSchema, { segmentsInternedStr })) - 1;
      this.#dotted.set(name, index);
    }
    return index;
  }

  typeConId(ref: TypeConRef, what: string): TypeConId {
    if (ref.packageId !== '' && !isPackageId(ref.packageId)) {
      this.invalid(`${what} refers to package "${ref.packageId}", which is not a package id`);
    }
    const packageId = create(SelfOrImportedPackageIdSchema, {
      Sum:
        ref.packageId === ''
          ? { case: 'selfPackageId', value: {} }
          : { case: 'importedPackageIdInternedStr', value: this.string(ref.packageId) },
    });
    return create(TypeConIdSchema, {
      module: { packageId, moduleNameInternedDname: this.dotted(ref.module, `${what}'s module`) },
      nameInternedDname: this.dotted(ref.name, what),
    });
  }

  /** `{ interned_type: i }` for the type, interning it (and every type inside it) first. */
  type(type: DamlType, what: string): Type {
    return create(TypeSchema, { Sum: { case: 'internedType', value: this.#intern(type, what) } });
  }

  #intern(type: DamlType, what: string): number {
    const message = create(TypeSchema, { Sum: this.#sum(type, what) });
    const bytes = toBinary(TypeSchema, message);
    const key = Buffer.from(bytes).toString('latin1');
    let index = this.#types.get(key);
    if (index === undefined) {
      index = this.types.push(bytes) - 1;
      this.#types.set(key, index);
    }
    return index;
  }

  #sum(type: DamlType, what: string): Type['Sum'] {
    const builtin = (b: BuiltinType, args: readonly DamlType[]): Type['Sum'] => ({
      case: 'builtin',
      value: create(Type_BuiltinSchema, { builtin: b, args: args.map((a) => this.type(a, what)) }),
    });
    switch (type.kind) {
      case 'Party':
      case 'Text':
      case 'Int64':
      case 'Bool':
      case 'Date':
      case 'Timestamp':
      case 'Unit':
        return builtin(PRIMITIVES[type.kind], []);
      case 'Numeric': {
        const scale: DamlType =
          typeof type.scale === 'number'
            ? { kind: 'Nat', value: type.scale }
            : { kind: 'Var', name: type.scale.var };
        return builtin(BuiltinType.NUMERIC, [scale]);
      }
      case 'ContractId':
      case 'Optional':
      case 'List':
      case 'TextMap':
        return builtin(CONTAINERS[type.kind], [type.of]);
      case 'GenMap':
        return builtin(BuiltinType.GENMAP, [type.key, type.value]);
      case 'Con':
        return {
          case: 'con',
          value: create(Type_ConSchema, {
            tycon: this.typeConId(type.ref, `a type in ${what}`),
            args: type.args.map((a) => this.type(a, what)),
          }),
        };
      case 'Var':
        return {
          case: 'var',
          value: create(Type_VarSchema, { varInternedStr: this.string(type.name) }),
        };
      case 'Nat':
        if (!Number.isInteger(type.value) || type.value < 0 || type.value > 37) {
          this.invalid(`${what} has the type-level number ${type.value} (0 to 37)`);
        }
        return { case: 'nat', value: BigInt(type.value) };
      case 'Unsupported':
        return this.invalid(`${what} has a type that cannot be written: ${type.text}`);
    }
  }

  invalid(problem: string): never {
    throw new DamlLfError('INVALID_DRAFT', { source: this.#source }, problem);
  }
}
