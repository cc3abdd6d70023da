import { showType, type DamlType, type TypeConRef } from '../../daml-lf/daml-type.js';
import type {
  CatalogueEntry,
  PackageCatalogue,
  ResolvedType,
} from '../../daml-lf/package-catalogue.js';
import type {
  ChoiceSignature,
  FieldSignature,
  InterfaceSignature,
  PackageSignature,
  TemplateSignature,
} from '../../daml-lf/package-signature.js';
import type { PackageOrigin } from '../compose/package-catalogue-reader.js';

/**
 * The JSON views of `ledgerbot packages list --json` and `packages show --json`: stable field
 * names and order (docs/operations.md, "Where types come from"), types written as Daml writes
 * them (`showType`, with `Module:Entity` names), references as rules write them. The text views
 * are built from the same views, so both say the same.
 */

export type FieldView = { readonly name: string; readonly type: string };

export type ChoiceView = {
  readonly name: string;
  readonly consuming: boolean;
  /** The argument's type. */
  readonly argument: string;
  /** The argument record's fields (a choice's argument is a record named after it); else null. */
  readonly argumentFields: readonly FieldView[] | null;
  readonly result: string;
};

export type TemplateView = {
  /** `#package-name:Module:Entity`, as a rule writes it. */
  readonly ref: string;
  /** `<package-id>:Module:Entity`, as events carry it. */
  readonly id: string;
  readonly module: string;
  readonly name: string;
  readonly fields: readonly FieldView[];
  /** The key's type; null without a key. */
  readonly key: string | null;
  /** The interfaces it implements, as references. */
  readonly implements: readonly string[];
  readonly choices: readonly ChoiceView[];
};

export type InterfaceView = {
  readonly ref: string;
  readonly id: string;
  readonly module: string;
  readonly name: string;
  /** The view type. */
  readonly view: string;
  /** The view record's fields; null when the view is not a known record. */
  readonly viewFields: readonly FieldView[] | null;
  readonly choices: readonly ChoiceView[];
};

export type PackageOriginView =
  | { readonly kind: 'participant'; readonly url: string }
  | { readonly kind: 'file' | 'model'; readonly file: string };

export type PackageView = {
  readonly packageId: string;
  readonly name: string;
  readonly version: string;
  readonly lfVersion: string;
  /** Where it was read from (its first source). */
  readonly from: PackageOriginView | null;
  readonly templates: readonly TemplateView[];
  readonly interfaces: readonly InterfaceView[];
};

/** `packages list --json`. */
export type PackageListView = {
  /** Whether these are every package of the ledger (read from the participant). */
  readonly complete: boolean;
  /** What was read from where, one line per source. */
  readonly sources: readonly string[];
  readonly packages: readonly PackageView[];
};

const type = (t: DamlType): string => showType(t, { qualify: true });

function fields(list: readonly FieldSignature[]): FieldView[] {
  return list.map((f) => ({ name: f.name, type: type(f.type) }));
}

/** The reference a rule would write for a data type of the catalogue (id form when unknown). */
export function refText(catalogue: PackageCatalogue, ref: TypeConRef): string {
  const name = catalogue.packageNameOf(ref.packageId);
  return `${name === undefined ? ref.packageId : `#${name}`}:${ref.module}:${ref.name}`;
}

/** The fields of a type that resolves to a record, else null. */
export function recordFields(
  catalogue: PackageCatalogue,
  t: DamlType,
): readonly FieldSignature[] | null {
  const resolved: ResolvedType = catalogue.resolve(t);
  return resolved.kind === 'Record' ? resolved.fields : null;
}

function choiceView(catalogue: PackageCatalogue, c: ChoiceSignature): ChoiceView {
  const args = recordFields(catalogue, c.argument);
  return {
    name: c.name,
    consuming: c.consuming,
    argument: type(c.argument),
    argumentFields: args === null ? null : fields(args),
    result: type(c.result),
  };
}

function templateView(
  catalogue: PackageCatalogue,
  pkg: PackageSignature,
  module: string,
  t: TemplateSignature,
): TemplateView {
  return {
    ref: `#${pkg.name}:${module}:${t.name}`,
    id: `${pkg.packageId}:${module}:${t.name}`,
    module,
    name: t.name,
    fields: fields(t.fields),
    key: t.key === null ? null : type(t.key),
    implements: t.implements.map((i) => refText(catalogue, i)),
    choices: t.choices.map((c) => choiceView(catalogue, c)),
  };
}

function interfaceView(
  catalogue: PackageCatalogue,
  pkg: PackageSignature,
  module: string,
  i: InterfaceSignature,
): InterfaceView {
  const view = recordFields(catalogue, i.view);
  return {
    ref: `#${pkg.name}:${module}:${i.name}`,
    id: `${pkg.packageId}:${module}:${i.name}`,
    module,
    name: i.name,
    view: type(i.view),
    viewFields: view === null ? null : fields(view),
    choices: i.choices.map((c) => choiceView(catalogue, c)),
  };
}

function originView(origin: PackageOrigin | undefined): PackageOriginView | null {
  if (origin === undefined) return null;
  return origin.kind === 'participant'
    ? { kind: 'participant', url: origin.url }
    : { kind: origin.kind, file: origin.file };
}

function packageView(
  catalogue: PackageCatalogue,
  pkg: PackageSignature,
  origin: PackageOrigin | undefined,
): PackageView {
  return {
    packageId: pkg.packageId,
    name: pkg.name,
    version: pkg.version,
    lfVersion: pkg.lfVersion,
    from: originView(origin),
    templates: pkg.modules.flatMap((m) =>
      m.templates.map((t) => templateView(catalogue, pkg, m.name, t)),
    ),
    interfaces: pkg.modules.flatMap((m) =>
      m.interfaces.map((i) => interfaceView(catalogue, pkg, m.name, i)),
    ),
  };
}

export function packageListView(
  catalogue: PackageCatalogue,
  origins: ReadonlyMap<string, PackageOrigin>,
  sources: readonly string[],
): PackageListView {
  return {
    complete: catalogue.complete,
    sources,
    packages: catalogue.packages.map((p) => packageView(catalogue, p, origins.get(p.packageId))),
  };
}

/** One template or interface's view (`packages show --json`'s `entry`). */
export function entryView(
  catalogue: PackageCatalogue,
  entry: CatalogueEntry,
):
  | ({ readonly kind: 'template' } & TemplateView)
  | ({ readonly kind: 'interface' } & InterfaceView) {
  return entry.kind === 'template'
    ? { kind: 'template', ...templateView(catalogue, entry.pkg, entry.ref.module, entry.template) }
    : { kind: 'interface', ...interfaceView(catalogue, entry.pkg, entry.ref.module, entry.iface) };
}
