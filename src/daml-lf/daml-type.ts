/**
 * Daml types as a package signature describes them: the serializable part of Daml-LF's type
 * language (what template fields, choice arguments and results, keys and interface views may
 * hold), plus a catch-all for what a reader meets elsewhere (type-class dictionaries hold
 * functions). Produced by the Daml-LF reader (`read-archive.ts`) from real packages and by the
 * sandbox from its models, so every check of a rule against "the ledger's types" reads one
 * algebra, whatever the packages came from.
 */

/** A reference to a data type (record, variant, enum or interface) of a package. */
export type TypeConRef = {
  /**
   * The defining package's id (64 hex chars). In a package draft handed to the encoder, `''`
   * stands for the package being encoded (its id is the hash of its own bytes).
   */
  readonly packageId: string;
  /** Dotted module name, e.g. "Splice.Api.Token.HoldingV1". */
  readonly module: string;
  /** Dotted entity name within the module, e.g. "HoldingView". */
  readonly name: string;
};

/** A type-level natural number: the scale argument of `Numeric`, or of a generic type. */
export type NatType = { readonly kind: 'Nat'; readonly value: number };

export type DamlType =
  | { readonly kind: 'Party' }
  | { readonly kind: 'Text' }
  | { readonly kind: 'Int64' }
  | { readonly kind: 'Bool' }
  | { readonly kind: 'Date' }
  /** Daml `Time`. */
  | { readonly kind: 'Timestamp' }
  | { readonly kind: 'Unit' }
  /** `Numeric n`; the scale is a type variable inside a generic type (`data Amount n = …`). */
  | { readonly kind: 'Numeric'; readonly scale: number | { readonly var: string } }
  /** `ContractId t`; `of` is usually a template or interface (`Con`), a `Var` when generic. */
  | { readonly kind: 'ContractId'; readonly of: DamlType }
  | { readonly kind: 'Optional'; readonly of: DamlType }
  | { readonly kind: 'List'; readonly of: DamlType }
  | { readonly kind: 'TextMap'; readonly of: DamlType }
  /** Daml's `Map k v` (`DA.Map`). */
  | { readonly kind: 'GenMap'; readonly key: DamlType; readonly value: DamlType }
  /** A data type applied to its type arguments (`MyPair Int` is `Con MyPair [Int64]`). */
  | { readonly kind: 'Con'; readonly ref: TypeConRef; readonly args: readonly DamlType[] }
  /** A type parameter of the data type being described. */
  | { readonly kind: 'Var'; readonly name: string }
  | NatType
  /**
   * Anything else: functions, `Any`, `TypeRep`, `BigNumeric`, structs, updates. Never in a
   * serializable position; `text` names it for messages.
   */
  | { readonly kind: 'Unsupported'; readonly text: string };

/** The kinds whose values are one JSON scalar and that need no catalogue to understand. */
export type PrimitiveKind = 'Party' | 'Text' | 'Int64' | 'Bool' | 'Date' | 'Timestamp' | 'Unit';

/** `#name`-free text of a reference: `Module:Entity`. */
export function qualifiedNameOfRef(ref: TypeConRef): string {
  return `${ref.module}:${ref.name}`;
}

/** Whether two references name the same data type. */
export function sameTypeCon(a: TypeConRef, b: TypeConRef): boolean {
  return a.packageId === b.packageId && a.module === b.module && a.name === b.name;
}

/**
 * The types directly inside `type`: what a ContractId, Optional, List, TextMap or GenMap holds,
 * a type constructor's arguments. For walks over a type; a rewrite switches on the kinds itself.
 */
export function childTypes(type: DamlType): readonly DamlType[] {
  switch (type.kind) {
    case 'ContractId':
    case 'Optional':
    case 'List':
    case 'TextMap':
      return [type.of];
    case 'GenMap':
      return [type.key, type.value];
    case 'Con':
      return type.args;
    default:
      return [];
  }
}

/**
 * `type` with every type variable replaced by its binding in `env` (unbound ones stay). Used to
 * read a field of `MyPair Int`: the field `left: a` becomes `left: Int64`.
 */
export function substitute(type: DamlType, env: ReadonlyMap<string, DamlType>): DamlType {
  if (env.size === 0) return type;
  switch (type.kind) {
    case 'Var':
      return env.get(type.name) ?? type;
    case 'Numeric': {
      if (typeof type.scale === 'number') return type;
      const bound = env.get(type.scale.var);
      return bound?.kind === 'Nat' ? { kind: 'Numeric', scale: bound.value } : type;
    }
    case 'ContractId':
    case 'Optional':
    case 'List':
    case 'TextMap':
      return { kind: type.kind, of: substitute(type.of, env) };
    case 'GenMap':
      return { kind: 'GenMap', key: substitute(type.key, env), value: substitute(type.value, env) };
    case 'Con':
      return { kind: 'Con', ref: type.ref, args: type.args.map((a) => substitute(a, env)) };
    default:
      return type;
  }
}

/**
 * A Daml-like rendering of a type, as a signature would write it: `Optional (List Party)`,
 * `ContractId Holding`, `Numeric 10`, `MyPair Int`, `Map Text AnotherRecord`. Type constructor
 * references show their entity name only (`qualify` shows `Module:Entity`).
 */
export function showType(type: DamlType, options: { readonly qualify?: boolean } = {}): string {
  const show = (t: DamlType, nested: boolean): string => {
    const wrap = (text: string): string => (nested ? `(${text})` : text);
    switch (t.kind) {
      case 'Party':
      case 'Text':
      case 'Bool':
      case 'Date':
        return t.kind;
      case 'Int64':
        return 'Int';
      case 'Timestamp':
        return 'Time';
      case 'Unit':
        return '()';
      case 'Numeric':
        return wrap(`Numeric ${typeof t.scale === 'number' ? t.scale : t.scale.var}`);
      case 'ContractId':
      case 'Optional':
      case 'TextMap':
        return wrap(`${t.kind} ${show(t.of, true)}`);
      case 'List':
        return `[${show(t.of, false)}]`;
      case 'GenMap':
        return wrap(`Map ${show(t.key, true)} ${show(t.value, true)}`);
      case 'Con': {
        const name = options.qualify === true ? qualifiedNameOfRef(t.ref) : t.ref.name;
        return t.args.length === 0
          ? name
          : wrap(`${name} ${t.args.map((a) => show(a, true)).join(' ')}`);
      }
      case 'Var':
        return t.name;
      case 'Nat':
        return String(t.value);
      case 'Unsupported':
        return wrap(t.text);
    }
  };
  return show(type, false);
}
