import type { PackageArchive } from '../../daml-lf/read-dalf.js';
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

/**
 * A party-set expression: a field of the contract (or of the choice argument), a CEL expression
 * over `this`, or the contract's signatories (the `Archive` of a template without a model).
 */
export type PartiesExpr =
  | { readonly kind: 'field'; readonly field: string; readonly pos: SourcePos }
  | { readonly kind: 'cel'; readonly expr: ModelExpr }
  | { readonly kind: 'signatories' };

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
  /**
   * False for a choice a DAR declares and no model gives behaviour to: its argument is checked,
   * but exercising it fails (DAML_INTERPRETATION_ERROR), since the sandbox runs no Daml code.
   */
  readonly implemented: boolean;
};

export type KeyDef = {
  readonly type: DamlType;
  readonly value: ValueExpr;
  readonly maintainers: readonly PartiesExpr[];
};

/** A template's implementation of an interface. */
export type InterfaceInstanceDef = {
  readonly interface: InterfaceDef;
  /** How the view is computed from `this`; null: not computed (a DAR template without model). */
  readonly view: ValueExpr | null;
  /**
   * Every choice of the interface, by name: argument, result and consuming as the interface
   * declares them; controllers and body as the template implements them (`implemented: false`
   * where it does not).
   */
  readonly choices: ReadonlyMap<string, ChoiceDef>;
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
  /**
   * `model`: a model says who its signatories and observers are, what it ensures and its key.
   * `none`: a DAR template no model describes: its signatories are the parties of the create
   * argument that authorize the create, its observers the argument's other parties; no ensure,
   * no key, no interface views; only `Archive` (by the signatories) runs.
   */
  readonly behaviour: 'model' | 'none';
  readonly signatories: readonly PartiesExpr[];
  readonly observers: readonly PartiesExpr[];
  readonly ensure: ModelExpr | null;
  readonly key: KeyDef | null;
  /** The template's own choices, including the implicit `Archive` (not its interfaces'). */
  readonly choices: ReadonlyMap<string, ChoiceDef>;
  /** By the interface's id (`<packageId>:Module:Entity`). */
  readonly implements: ReadonlyMap<string, InterfaceInstanceDef>;
};

/** A choice of an interface: its types; each implementing template gives its behaviour. */
export type InterfaceChoiceDef = {
  readonly name: string;
  readonly consuming: boolean;
  readonly argument: readonly FieldDef[];
  readonly returns: DamlType;
};

export type InterfaceDef = {
  readonly packageId: string;
  readonly packageName: string;
  readonly qualifiedName: string;
  readonly interfaceId: string;
  readonly viewType: DamlType;
  readonly choices: ReadonlyMap<string, InterfaceChoiceDef>;
};

/**
 * A package as the sandbox runs it: a model file's own package, a DAR's package described by a
 * model (same name and version), or a DAR's package without a model.
 */
export type PackageModel = {
  /** The model file, or the DAR, that the package comes from. */
  readonly file: string;
  readonly name: string;
  readonly version: string;
  /**
   * 64 lowercase hex chars. A model's own package: the id of the archive made of its
   * signature (see modelArchive); a DAR's package: its id.
   */
  readonly packageId: string;
  /** By `Module:Entity`. */
  readonly templates: ReadonlyMap<string, TemplateDef>;
  readonly interfaces: ReadonlyMap<string, InterfaceDef>;
  /** Where its types come from: the model file's declarations, or the DAR. */
  readonly source: 'model' | 'dar';
  /**
   * A model's own package: the archive the encoder made of its signature (what
   * `GET /v2/packages/{id}` serves; see modelArchive). null for a DAR's package: the DAR has it.
   */
  readonly archive: PackageArchive | null;
};
