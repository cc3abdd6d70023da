import {
  qualifiedNameOfRef,
  sameTypeCon,
  substitute,
  type DamlType,
  type TypeConRef,
} from './daml-type.js';
import type {
  DataTypeSignature,
  FieldSignature,
  InterfaceSignature,
  PackageSignature,
  TemplateSignature,
} from './package-signature.js';

/**
 * The packages a ledger knows, as one searchable set: what rules are type-checked against, what
 * the sandbox serves and `ledgerbot packages` prints. Built from package signatures, whatever they
 * came from (DARs, the participant's `GET /v2/packages/{id}`, sandbox models). Pure and immutable;
 * indexes are built once, at creation.
 */

/** A template or interface reference as a rule writes it (`#name:Module:Entity` or by id). */
export type EntityRef =
  | {
      readonly form: 'package-name';
      readonly packageName: string;
      readonly module: string;
      readonly entity: string;
    }
  | {
      readonly form: 'package-id';
      readonly packageId: string;
      readonly module: string;
      readonly entity: string;
    };

/** A template or interface found in the catalogue, with the package that declares it. */
export type CatalogueEntry =
  | {
      readonly kind: 'template';
      readonly pkg: PackageSignature;
      readonly ref: TypeConRef;
      readonly template: TemplateSignature;
    }
  | {
      readonly kind: 'interface';
      readonly pkg: PackageSignature;
      readonly ref: TypeConRef;
      readonly iface: InterfaceSignature;
    };

/**
 * A type with its outermost data type looked up: what a value of it looks like on the wire.
 * Records, variants and enums come with their type arguments substituted (the fields of
 * `MyPair Int` are `Int64`s). `Unknown` is a data type the catalogue does not have (a package that
 * was not read): nothing can be said about its values.
 */
export type ResolvedType =
  | Exclude<DamlType, { readonly kind: 'Con' }>
  | {
      readonly kind: 'Record';
      readonly ref: TypeConRef;
      readonly fields: readonly FieldSignature[];
    }
  | {
      readonly kind: 'Variant';
      readonly ref: TypeConRef;
      readonly constructors: readonly FieldSignature[];
    }
  | { readonly kind: 'Enum'; readonly ref: TypeConRef; readonly constructors: readonly string[] }
  | { readonly kind: 'Interface'; readonly ref: TypeConRef }
  | { readonly kind: 'Unknown'; readonly ref: TypeConRef };

export type PackageCatalogueOptions = {
  /**
   * True when the packages are every package the ledger has (read from the participant): a
   * reference to a package name not in the catalogue is then an error, not a warning.
   * @default false
   */
  readonly complete?: boolean;
};

const key = (packageId: string, module: string, name: string): string =>
  `${packageId}:${module}:${name}`;

export class PackageCatalogue {
  /** Every package, each id once, in the order given. */
  readonly packages: readonly PackageSignature[];
  readonly complete: boolean;
  readonly #byId: ReadonlyMap<string, PackageSignature>;
  readonly #byName: ReadonlyMap<string, readonly PackageSignature[]>;
  /** `packageId:Module:Entity` → the template or interface. */
  readonly #entries: ReadonlyMap<string, CatalogueEntry>;
  readonly #dataTypes: ReadonlyMap<string, DataTypeSignature>;
  /** `Module:Entity` → every entry of that qualified name (in any package). */
  readonly #byQualifiedName: ReadonlyMap<string, readonly CatalogueEntry[]>;

  private constructor(packages: readonly PackageSignature[], complete: boolean) {
    const byId = new Map<string, PackageSignature>();
    for (const p of packages) if (!byId.has(p.packageId)) byId.set(p.packageId, p);
    this.packages = Object.freeze([...byId.values()]);
    this.complete = complete;
    this.#byId = byId;
    const byName = new Map<string, PackageSignature[]>();
    const entries = new Map<string, CatalogueEntry>();
    const dataTypes = new Map<string, DataTypeSignature>();
    const byQualifiedName = new Map<string, CatalogueEntry[]>();
    for (const pkg of this.packages) {
      const list = byName.get(pkg.name);
      if (list === undefined) byName.set(pkg.name, [pkg]);
      else list.push(pkg);
      for (const module of pkg.modules) {
        for (const dt of module.dataTypes) {
          dataTypes.set(key(pkg.packageId, module.name, dt.name), dt);
        }
        const add = (entry: CatalogueEntry): void => {
          entries.set(key(pkg.packageId, module.name, entry.ref.name), entry);
          const qn = qualifiedNameOfRef(entry.ref);
          const same = byQualifiedName.get(qn);
          if (same === undefined) byQualifiedName.set(qn, [entry]);
          else same.push(entry);
        };
        for (const template of module.templates) {
          const ref = { packageId: pkg.packageId, module: module.name, name: template.name };
          add({ kind: 'template', pkg, ref, template });
        }
        for (const iface of module.interfaces) {
          const ref = { packageId: pkg.packageId, module: module.name, name: iface.name };
          add({ kind: 'interface', pkg, ref, iface });
        }
      }
    }
    // Newest version first, so "the package named X" means its latest version.
    for (const list of byName.values()) list.sort((a, b) => compareVersions(b.version, a.version));
    this.#byName = byName;
    this.#entries = entries;
    this.#dataTypes = dataTypes;
    this.#byQualifiedName = byQualifiedName;
  }

  static create(
    packages: Iterable<PackageSignature>,
    options: PackageCatalogueOptions = {},
  ): PackageCatalogue {
    return new PackageCatalogue([...packages], options.complete ?? false);
  }

  /** A catalogue of this one's packages and `more`'s (ids already present are kept). */
  with(more: Iterable<PackageSignature>, options: PackageCatalogueOptions = {}): PackageCatalogue {
    return new PackageCatalogue([...this.packages, ...more], options.complete ?? this.complete);
  }

  packageById(packageId: string): PackageSignature | undefined {
    return this.#byId.get(packageId);
  }

  /** Every version of the package named `name`, newest first; empty when unknown. */
  packagesNamed(name: string): readonly PackageSignature[] {
    return this.#byName.get(name) ?? [];
  }

  /** The distinct package names, sorted. */
  packageNames(): string[] {
    return [...this.#byName.keys()].sort();
  }

  /** The name of the package with this id, when the catalogue has it. */
  packageNameOf(packageId: string): string | undefined {
    return this.#byId.get(packageId)?.name;
  }

  /**
   * The templates and interfaces a reference names: every version of the package for a
   * `#name` reference, the one package for an id reference. Empty when none.
   */
  entries(ref: EntityRef): CatalogueEntry[] {
    const packages =
      ref.form === 'package-name'
        ? this.packagesNamed(ref.packageName)
        : [this.#byId.get(ref.packageId)].filter((p) => p !== undefined);
    const out: CatalogueEntry[] = [];
    for (const pkg of packages) {
      const entry = this.#entries.get(key(pkg.packageId, ref.module, ref.entity));
      if (entry !== undefined) out.push(entry);
    }
    return out;
  }

  /** The template or interface a type constructor reference names, when known. */
  entryOf(ref: TypeConRef): CatalogueEntry | undefined {
    return this.#entries.get(key(ref.packageId, ref.module, ref.name));
  }

  /** Every entry whose `Module:Entity` is `qualifiedName`, in any package. */
  entriesNamed(qualifiedName: string): readonly CatalogueEntry[] {
    return this.#byQualifiedName.get(qualifiedName) ?? [];
  }

  /** Every template and interface of every package, in package order. */
  allEntries(): CatalogueEntry[] {
    return [...this.#entries.values()];
  }

  /** The templates that implement the interface `iface` (in any package of the catalogue). */
  implementersOf(iface: TypeConRef): Extract<CatalogueEntry, { kind: 'template' }>[] {
    const out: Extract<CatalogueEntry, { kind: 'template' }>[] = [];
    for (const entry of this.#entries.values()) {
      if (entry.kind === 'template' && entry.template.implements.some((i) => sameTypeCon(i, iface)))
        out.push(entry);
    }
    return out;
  }

  dataType(ref: TypeConRef): DataTypeSignature | undefined {
    return this.#dataTypes.get(key(ref.packageId, ref.module, ref.name));
  }

  /**
   * `type` with its outermost data type looked up and its type arguments substituted; every
   * other type comes back as it is. Only one level: resolve a field's type again to go deeper.
   */
  resolve(type: DamlType): ResolvedType {
    if (type.kind !== 'Con') return type;
    const dt = this.dataType(type.ref);
    if (dt === undefined) return { kind: 'Unknown', ref: type.ref };
    const env = new Map<string, DamlType>();
    dt.params.forEach((p, i) => {
      const arg = type.args[i];
      if (arg !== undefined) env.set(p, arg);
    });
    const sub = (fields: readonly FieldSignature[]): FieldSignature[] =>
      fields.map((f) => ({ name: f.name, type: substitute(f.type, env) }));
    switch (dt.shape.kind) {
      case 'record':
        return { kind: 'Record', ref: type.ref, fields: sub(dt.shape.fields) };
      case 'variant':
        return { kind: 'Variant', ref: type.ref, constructors: sub(dt.shape.constructors) };
      case 'enum':
        return { kind: 'Enum', ref: type.ref, constructors: dt.shape.constructors };
      case 'interface':
        return { kind: 'Interface', ref: type.ref };
    }
  }
}

/** `#name:Module:Entity`, the way rules write a reference to an entry. */
export function referenceText(entry: CatalogueEntry): string {
  return `#${entry.pkg.name}:${entry.ref.module}:${entry.ref.name}`;
}

/**
 * Orders Daml package versions (`1.0.0`, `0.1.14`): numerically by dot-separated part, a
 * missing part counting as 0; text parts compare as text.
 */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.');
  const pb = b.split('.');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? '0';
    const y = pb[i] ?? '0';
    const nx = /^\d+$/.test(x) ? Number(x) : Number.NaN;
    const ny = /^\d+$/.test(y) ? Number(y) : Number.NaN;
    const c =
      Number.isNaN(nx) || Number.isNaN(ny) ? x.localeCompare(y) : nx === ny ? 0 : nx < ny ? -1 : 1;
    if (c !== 0) return c;
  }
  return 0;
}
