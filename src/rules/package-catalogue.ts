import type { TemplateRef } from './compiled-rule.js';

/**
 * The templates (and interfaces) the ledger knows, for checking rule references at load time.
 * The runtime builds it from the sandbox's models or from `GET /v2/packages`; without one,
 * unknown templates and choices are only found when commands are rejected.
 */
export type PackageCatalogue = {
  readonly templates: readonly CatalogueTemplate[];
};

export type CatalogueTemplate = {
  readonly packageName: string;
  /** Set when known; lets package-id references be checked too. */
  readonly packageId?: string;
  /** Dotted module path, e.g. "Invoice". */
  readonly module: string;
  readonly entity: string;
  /** Choice names, including inherited Archive. */
  readonly choices: readonly string[];
  /** Whether the template has a contract key (needed by exerciseByKey); unknown when absent. */
  readonly hasKey?: boolean;
  /**
   * The template's fields (its createArgument); when given, rules that read a field it does not
   * have are errors. Unknown when absent: any field name is accepted.
   */
  readonly fields?: readonly CatalogueField[];
  /** The argument fields of each choice, by choice name; a choice left out is unknown. */
  readonly choiceArguments?: Readonly<Record<string, readonly CatalogueField[]>>;
  /** The contract key's type, when the template has a key and it is known. */
  readonly keyType?: CatalogueType;
};

/** A field of a Daml record. */
export type CatalogueField = { readonly name: string; readonly type: CatalogueType };

/**
 * A Daml type, as far as field checks need it: records (whose field names are checked),
 * Optional (the participant may leave such a field out), lists and text maps (whose items are
 * checked), and everything else.
 */
export type CatalogueType =
  | { readonly kind: 'record'; readonly fields: readonly CatalogueField[] }
  | { readonly kind: 'optional' | 'list' | 'textMap'; readonly of: CatalogueType }
  | {
      readonly kind: 'other';
      /** The Daml type's name when known: Numeric, Int64, Text, Timestamp, Date, Party, … */
      readonly daml?: string;
    };

/** The catalogue's entries a template reference names (by package name or by package id). */
export function catalogueEntriesOf(
  catalogue: PackageCatalogue | undefined,
  ref: TemplateRef,
): readonly CatalogueTemplate[] {
  return (catalogue?.templates ?? []).filter(
    (t) =>
      t.module === ref.module &&
      t.entity === ref.entity &&
      (ref.form === 'package-name'
        ? t.packageName === ref.packageName
        : t.packageId === ref.packageId),
  );
}
