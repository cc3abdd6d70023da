import type { CelProgram } from '../../rules/cel/cel-program.js';

/**
 * The compiled, frozen form of a sandbox model file ("a small Daml"). See docs/sandbox-models.md
 * for the YAML format. Everything here is immutable once `loadModel` returns it.
 */

/**
 * A Daml-LF type as values are checked against it: structural, every data type written out
 * (a record is its fields, not a name to look up). Model files give these directly; a DAR's
 * types (the nominal `DamlType` of src/daml-lf/) are resolved into them by `valueTypeOf`, which
 * is why `Variant`, `GenMap` and `Unsupported` exist although a model file cannot write them.
 * A recursive DAR type is a cyclic graph of these objects: walk them by value, or guard.
 */
export type DamlType =
  | { readonly kind: 'Party' }
  | { readonly kind: 'Text' }
  | { readonly kind: 'Int64' }
  | { readonly kind: 'Numeric'; readonly scale: number }
  | { readonly kind: 'Bool' }
  | { readonly kind: 'Date' }
  | { readonly kind: 'Timestamp' }
  | { readonly kind: 'Unit' }
  /** `template`: `Module:Entity` of the template or interface, or null for any contract. */
  | { readonly kind: 'ContractId'; readonly template: string | null }
  | { readonly kind: 'Optional'; readonly of: DamlType }
  | { readonly kind: 'List'; readonly of: DamlType }
  | { readonly kind: 'TextMap'; readonly of: DamlType }
  /** Daml's `Map k v`; on the wire a list of `[key, value]` pairs. */
  | { readonly kind: 'GenMap'; readonly key: DamlType; readonly value: DamlType }
  /** `name`: the data type's `Module:Entity` (with its arguments), when it has one. */
  | { readonly kind: 'Enum'; readonly constructors: readonly string[]; readonly name?: string }
  | { readonly kind: 'Record'; readonly fields: readonly FieldDef[]; readonly name?: string }
  /** On the wire `{"tag": constructor, "value": …}`. */
  | { readonly kind: 'Variant'; readonly constructors: readonly FieldDef[]; readonly name: string }
  /** A type no value can have here (a function, a type variable, a package not loaded). */
  | { readonly kind: 'Unsupported'; readonly text: string };

export type FieldDef = { readonly name: string; readonly type: DamlType };

/** A source position, 1-based, for messages that point back into the model file. */
export type SourcePos = { readonly file: string; readonly line: number; readonly col: number };

/** A compiled CEL expression with the position of its source text. */
export type ModelExpr = {
  readonly source: string;
  readonly pos: SourcePos;
  readonly program: CelProgram;
};

/** A party-set expression: either a field of the contract or a CEL expression over `this`. */
export type PartiesExpr =
  | { readonly kind: 'field'; readonly field: string; readonly pos: SourcePos }
  | { readonly kind: 'cel'; readonly expr: ModelExpr };

/** A value expression: one CEL expression, or a record of value expressions by field name. */
export type ValueExpr =
  | { readonly kind: 'cel'; readonly expr: ModelExpr }
  | { readonly kind: 'record'; readonly fields: ReadonlyMap<string, ValueExpr> };

export type Step =
  | {
      readonly kind: 'create';
      readonly name: string | null;
      readonly template: string;
      readonly argument: ValueExpr;
      readonly pos: SourcePos;
    }
  | {
      readonly kind: 'exercise';
      readonly name: string | null;
      /** `Module:Entity` of a template or interface of this package. */
      readonly template: string;
      readonly contractId: ModelExpr;
      readonly choice: string;
      readonly argument: ValueExpr;
      readonly pos: SourcePos;
    }
  | {
      readonly kind: 'fetch';
      readonly name: string | null;
      readonly template: string;
      readonly contractId: ModelExpr;
      readonly pos: SourcePos;
    }
  | {
      readonly kind: 'assert';
      readonly condition: ModelExpr;
      readonly message: string;
      readonly pos: SourcePos;
    };

export type ChoiceDef = {
  readonly name: string;
  readonly consuming: boolean;
  readonly controllers: readonly PartiesExpr[];
  readonly observers: readonly PartiesExpr[];
  readonly argument: readonly FieldDef[];
  readonly body: readonly Step[];
  /** null: the choice returns Unit (`{}`). A value like `with:` (an expression or a record). */
  readonly result: ValueExpr | null;
  /** The declared return type, used to normalise the result; null: as evaluated. */
  readonly returns: DamlType | null;
};

export type KeyDef = {
  readonly type: DamlType;
  readonly value: ValueExpr;
  readonly maintainers: readonly PartiesExpr[];
};

export type InterfaceInstanceDef = {
  /** `Module:Entity` of the interface. */
  readonly interface: string;
  readonly view: ValueExpr;
};

export type TemplateDef = {
  readonly packageId: string;
  readonly packageName: string;
  /** `Module:Entity`. */
  readonly qualifiedName: string;
  readonly moduleName: string;
  readonly entityName: string;
  /** `<packageId>:Module:Entity`, the form events carry. */
  readonly templateId: string;
  readonly fields: readonly FieldDef[];
  readonly signatories: readonly PartiesExpr[];
  readonly observers: readonly PartiesExpr[];
  readonly ensure: ModelExpr | null;
  readonly key: KeyDef | null;
  /** Including the implicit `Archive`. */
  readonly choices: ReadonlyMap<string, ChoiceDef>;
  readonly implements: ReadonlyMap<string, InterfaceInstanceDef>;
};

export type InterfaceDef = {
  readonly packageId: string;
  readonly packageName: string;
  readonly qualifiedName: string;
  readonly interfaceId: string;
  readonly viewType: DamlType;
};

export type PackageModel = {
  readonly file: string;
  readonly name: string;
  readonly version: string;
  /** 64 lowercase hex chars: sha256 of `<name>:<version>`. */
  readonly packageId: string;
  /** By `Module:Entity`. */
  readonly templates: ReadonlyMap<string, TemplateDef>;
  readonly interfaces: ReadonlyMap<string, InterfaceDef>;
};
