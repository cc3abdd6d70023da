import { DAR_LIMITS } from './dar-limits.js';
import { DamlLfError, type ArchiveLocation } from './daml-lf-error.js';
import { childTypes, showType, substitute, type DamlType, type TypeConRef } from './daml-type.js';
import { decodeMessage } from './decode-archive.js';
import {
  BuiltinType,
  TypeSchema,
  type DefTypeSyn,
  type Package,
  type Type,
} from './generated/daml_lf2_pb.js';
import type { PackageNames } from './package-names.js';

/**
 * Daml-LF 2 types of one package as `DamlType`s. A Daml-LF type is a head (a type constructor, a
 * builtin, a variable) applied to arguments, written either flat (`Con` with `args`) or, since
 * LF 2.dev, as nested `TApp`s; most types are indexes into the package's `interned_types`. So a
 * type is first read as `Applied` (head + arguments so far), which a `TApp` extends, and only
 * then turned into a `DamlType`. The interned type table is read as bytes (see
 * scripts/gen-daml-lf.mjs): an entry is decoded when a signature first needs it, and converted
 * once (the table may share a type many times). Synonyms of this package are expanded; synonyms of other packages, functions,
 * structs, `forall`s and the builtins no ledger value has become `Unsupported`.
 */

type Head =
  | { readonly kind: 'con'; readonly ref: TypeConRef }
  | { readonly kind: 'builtin'; readonly builtin: BuiltinType }
  | { readonly kind: 'var'; readonly name: string }
  | { readonly kind: 'done'; readonly type: DamlType };

type Applied = { readonly head: Head; readonly args: readonly DamlType[] };

type Measure = { readonly size: number; readonly depth: number };

const UNSUPPORTED_BUILTINS: Partial<Record<BuiltinType, string>> = {
  [BuiltinType.ANY]: 'Any',
  [BuiltinType.ANY_EXCEPTION]: 'AnyException',
  [BuiltinType.TYPE_REP]: 'TypeRep',
  [BuiltinType.ARROW]: '->',
  [BuiltinType.UPDATE]: 'Update',
  [BuiltinType.FAILURE_CATEGORY]: 'FailureCategory',
  [BuiltinType.BIGNUMERIC]: 'BigNumeric',
  [BuiltinType.ROUNDING_MODE]: 'RoundingMode',
};

export class TypeConverter {
  readonly #pkg: Package;
  readonly #names: PackageNames;
  readonly #packageId: string;
  readonly #where: ArchiveLocation;
  readonly #interned: (Applied | null | undefined)[] = [];
  readonly #synonyms = new Map<string, DefTypeSyn>();
  readonly #expanding = new Set<string>();
  readonly #measures = new WeakMap<DamlType, Measure>();
  #depth = 0;

  constructor(pkg: Package, names: PackageNames, packageId: string, where: ArchiveLocation) {
    this.#pkg = pkg;
    this.#names = names;
    this.#packageId = packageId;
    this.#where = where;
    for (const module of pkg.modules) {
      const moduleName = names.dotted(module.nameInternedDname);
      for (const syn of module.synonyms) {
        this.#synonyms.set(`${moduleName}:${names.dotted(syn.nameInternedDname)}`, syn);
      }
    }
  }

  /**
   * The type, checked against the size limits (`DAR_LIMITS.maxTypeNodes`, `maxTypeDepth`): what
   * a signature holds is walked by every consumer, so a type that expands to millions of nodes
   * (interned types can share) is refused here.
   */
  convert(type: Type | undefined, what: string): DamlType {
    const out = this.#finish(this.#applied(type));
    const { size, depth } = this.#measure(out);
    if (size > DAR_LIMITS.maxTypeNodes || depth > DAR_LIMITS.maxTypeDepth) {
      throw new DamlLfError(
        'ARCHIVE_TOO_DEEP',
        this.#where,
        `the type of ${what} in package ${this.#packageId} expands to ${size} nodes, ${depth} deep; the most ledgerbot reads is ${DAR_LIMITS.maxTypeNodes} nodes, ${DAR_LIMITS.maxTypeDepth} deep`,
      );
    }
    return out;
  }

  #applied(type: Type | undefined): Applied {
    if (++this.#depth > DAR_LIMITS.recursionLimit) {
      throw new DamlLfError(
        'ARCHIVE_TOO_DEEP',
        this.#where,
        `a type in package ${this.#packageId} nests deeper than ${DAR_LIMITS.recursionLimit}`,
      );
    }
    try {
      return this.#appliedOnce(type);
    } finally {
      this.#depth--;
    }
  }

  #appliedOnce(type: Type | undefined): Applied {
    const sum = type?.Sum;
    switch (sum?.case) {
      case 'var':
        return this.#head(
          { kind: 'var', name: this.#names.string(sum.value.varInternedStr) },
          sum.value.args,
        );
      case 'con':
        return this.#head(
          { kind: 'con', ref: this.#names.typeConRef(sum.value.tycon) },
          sum.value.args,
        );
      case 'builtin':
        return this.#head({ kind: 'builtin', builtin: sum.value.builtin }, sum.value.args);
      case 'nat': {
        const value = Number(sum.value);
        if (!(value >= 0 && value <= 37))
          throw this.#names.corrupt(`type-level number ${sum.value}`);
        return done({ kind: 'Nat', value });
      }
      case 'syn':
        return done(
          this.#synonym(
            this.#names.typeConRef(sum.value.tysyn),
            sum.value.args.map((a) => this.#finish(this.#applied(a))),
          ),
        );
      case 'internedType':
        return this.#internedType(sum.value);
      case 'tapp': {
        const fun = this.#applied(sum.value.lhs);
        return { head: fun.head, args: [...fun.args, this.#finish(this.#applied(sum.value.rhs))] };
      }
      case 'forall':
        return done({ kind: 'Unsupported', text: 'forall' });
      case 'struct':
        return done({ kind: 'Unsupported', text: 'struct' });
      default:
        throw this.#names.corrupt('a type has no content');
    }
  }

  #head(head: Head, args: readonly Type[]): Applied {
    return { head, args: args.map((a) => this.#finish(this.#applied(a))) };
  }

  #internedType(index: number): Applied {
    const known = this.#interned[index];
    if (known !== undefined && known !== null) return known;
    const bytes = this.#pkg.internedTypes[index];
    // The table may only refer to earlier entries; `null` marks one being converted (a cycle).
    if (bytes === undefined || known === null) {
      throw this.#names.corrupt(`interned type ${index} does not exist or refers to itself`);
    }
    this.#interned[index] = null;
    const type = decodeMessage(TypeSchema, bytes, this.#where, `interned type ${index}`);
    const out = this.#applied(type);
    this.#interned[index] = out;
    return out;
  }

  #synonym(ref: TypeConRef, args: readonly DamlType[]): DamlType {
    const key = `${ref.module}:${ref.name}`;
    const unsupported: DamlType = {
      kind: 'Unsupported',
      text: [key, ...args.map((a) => this.#show(a))].join(' '),
    };
    const syn = ref.packageId === this.#packageId ? this.#synonyms.get(key) : undefined;
    if (syn === undefined || syn.params.length !== args.length) return unsupported;
    if (this.#expanding.has(key)) throw this.#names.corrupt(`type synonym ${key} refers to itself`);
    this.#expanding.add(key);
    try {
      const body = this.convert(syn.type, `type synonym ${key}`);
      const env = new Map<string, DamlType>();
      syn.params.forEach((p, i) => env.set(this.#names.string(p.varInternedStr), args[i]!));
      return substitute(body, env);
    } finally {
      this.#expanding.delete(key);
    }
  }

  #finish({ head, args }: Applied): DamlType {
    switch (head.kind) {
      case 'con':
        return { kind: 'Con', ref: head.ref, args };
      case 'var':
        return args.length === 0
          ? { kind: 'Var', name: head.name }
          : { kind: 'Unsupported', text: [head.name, ...args.map((a) => this.#show(a))].join(' ') };
      case 'done':
        return args.length === 0
          ? head.type
          : {
              kind: 'Unsupported',
              text: [this.#show(head.type), ...args.map((a) => this.#show(a))].join(' '),
            };
      case 'builtin':
        return builtinType(head.builtin, args, (t) => this.#show(t));
    }
  }

  /** `showType` for messages, cut short for a type too large to print (a hostile one). */
  #show(type: DamlType): string {
    return this.#measure(type).size > 64 ? '…' : showType(type);
  }

  /** Size (nodes) and depth of a type, each shared node measured once. */
  #measure(type: DamlType): Measure {
    const known = this.#measures.get(type);
    if (known !== undefined) return known;
    let size = 1;
    let depth = 0;
    for (const child of childTypes(type)) {
      const m = this.#measure(child);
      size += m.size;
      depth = Math.max(depth, m.depth);
    }
    const out = { size, depth: depth + 1 };
    this.#measures.set(type, out);
    return out;
  }
}

function done(type: DamlType): Applied {
  return { head: { kind: 'done', type }, args: [] };
}

function builtinType(
  builtin: BuiltinType,
  args: readonly DamlType[],
  show: (type: DamlType) => string,
): DamlType {
  const [a, b] = args;
  switch (args.length) {
    case 0:
      switch (builtin) {
        case BuiltinType.UNIT:
          return { kind: 'Unit' };
        case BuiltinType.BOOL:
          return { kind: 'Bool' };
        case BuiltinType.INT64:
          return { kind: 'Int64' };
        case BuiltinType.DATE:
          return { kind: 'Date' };
        case BuiltinType.TIMESTAMP:
          return { kind: 'Timestamp' };
        case BuiltinType.PARTY:
          return { kind: 'Party' };
        case BuiltinType.TEXT:
          return { kind: 'Text' };
      }
      break;
    case 1:
      switch (builtin) {
        case BuiltinType.NUMERIC:
          if (a?.kind === 'Nat') return { kind: 'Numeric', scale: a.value };
          if (a?.kind === 'Var') return { kind: 'Numeric', scale: { var: a.name } };
          break;
        case BuiltinType.CONTRACT_ID:
          return { kind: 'ContractId', of: a! };
        case BuiltinType.OPTIONAL:
          return { kind: 'Optional', of: a! };
        case BuiltinType.LIST:
          return { kind: 'List', of: a! };
        case BuiltinType.TEXTMAP:
          return { kind: 'TextMap', of: a! };
      }
      break;
    case 2:
      if (builtin === BuiltinType.GENMAP) return { kind: 'GenMap', key: a!, value: b! };
      if (builtin === BuiltinType.ARROW) {
        return { kind: 'Unsupported', text: `${show(a!)} -> ${show(b!)}` };
      }
      break;
  }
  const name = UNSUPPORTED_BUILTINS[builtin] ?? BuiltinType[builtin] ?? `builtin ${builtin}`;
  return { kind: 'Unsupported', text: [name, ...args.map(show)].join(' ') };
}
