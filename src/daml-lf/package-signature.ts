import type { DamlType, TypeConRef } from './daml-type.js';

/**
 * What a Daml package declares, without its code: the types a rule reads and writes. The
 * Daml-LF reader builds one per archive (interned names and types resolved, every package id in
 * a type reference made absolute); the sandbox builds one per model file. Frozen once built.
 */
export type PackageSignature = {
  /** sha256 of the archive's payload, 64 lowercase hex chars. */
  readonly packageId: string;
  /** The package name (`#name:` in references), e.g. "splice-amulet". */
  readonly name: string;
  readonly version: string;
  /** Daml-LF version of the archive, e.g. "2.1"; "model" for a sandbox model's package. */
  readonly lfVersion: string;
  readonly modules: readonly ModuleSignature[];
  /** Ids of the packages whose types this one refers to, sorted. */
  readonly dependencies: readonly string[];
};

export type ModuleSignature = {
  /** Dotted, e.g. "Splice.Api.Token.HoldingV1". */
  readonly name: string;
  /** Records, variants and enums, serializable or not, in the order of the archive. */
  readonly dataTypes: readonly DataTypeSignature[];
  readonly synonyms: readonly TypeSynonymSignature[];
  readonly templates: readonly TemplateSignature[];
  readonly interfaces: readonly InterfaceSignature[];
};

/** A field of a record, or a constructor of a variant with its argument's type. */
export type FieldSignature = { readonly name: string; readonly type: DamlType };

export type DataTypeShape =
  | { readonly kind: 'record'; readonly fields: readonly FieldSignature[] }
  | { readonly kind: 'variant'; readonly constructors: readonly FieldSignature[] }
  | { readonly kind: 'enum'; readonly constructors: readonly string[] }
  /** The data type that stands for an interface (its values are not serializable). */
  | { readonly kind: 'interface' };

export type DataTypeSignature = {
  /** Dotted within its module: "MyPair", or "Outer.Inner" for a nested name. */
  readonly name: string;
  /** Type parameter names, in order (`data MyPair a` has ["a"]). */
  readonly params: readonly string[];
  /** Whether values of it can be on the ledger (template fields, choice arguments, …). */
  readonly serializable: boolean;
  readonly shape: DataTypeShape;
};

export type TypeSynonymSignature = {
  readonly name: string;
  readonly params: readonly string[];
  readonly type: DamlType;
};

export type ChoiceSignature = {
  readonly name: string;
  readonly consuming: boolean;
  /** Usually a record named after the choice (`Con Module:ChoiceName`). */
  readonly argument: DamlType;
  readonly result: DamlType;
};

export type TemplateSignature = {
  /** Dotted entity name within its module; the template's record type has the same name. */
  readonly name: string;
  /** The fields of the template's record (its create argument). */
  readonly fields: readonly FieldSignature[];
  /** Every choice, the implicit `Archive` included. */
  readonly choices: readonly ChoiceSignature[];
  /** The contract key's type; null when the template has no key. */
  readonly key: DamlType | null;
  /** The interfaces it implements (interface instances declared in the template). */
  readonly implements: readonly TypeConRef[];
};

export type InterfaceSignature = {
  readonly name: string;
  /** The view type (`viewtype HoldingView`). */
  readonly view: DamlType;
  /** The interface's choices, as the archive declares them. */
  readonly choices: readonly ChoiceSignature[];
  /** Interfaces this one requires. */
  readonly requires: readonly TypeConRef[];
};
