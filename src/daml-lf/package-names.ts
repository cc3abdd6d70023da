import type { TypeConRef } from './daml-type.js';
import { DamlLfError, type ArchiveLocation } from './daml-lf-error.js';
import type { Package, SelfOrImportedPackageId, TypeConId } from './generated/daml_lf2_pb.js';

const PACKAGE_ID = /^[0-9a-f]{64}$/;

/** Whether `text` is a Daml-LF 2 package id: a sha256, 64 lowercase hex characters. */
export function isPackageId(text: string): boolean {
  return PACKAGE_ID.test(text);
}

/**
 * The interning tables of one decoded package: Daml-LF 2 writes most names as indexes into
 * `interned_strings` and `interned_dotted_names`, and package references as an index into the
 * strings (LF 2.1) or into `package_imports` (LF 2.2+), or as "this package". Every index is
 * checked: an archive is outside input, and an index out of range is a corrupt archive, not a
 * crash.
 */
export class PackageNames {
  readonly #pkg: Package;
  readonly #packageId: string;
  readonly #where: ArchiveLocation;
  readonly #dotted: (string | undefined)[] = [];

  constructor(pkg: Package, packageId: string, where: ArchiveLocation) {
    this.#pkg = pkg;
    this.#packageId = packageId;
    this.#where = where;
  }

  string(index: number): string {
    const text = this.#pkg.internedStrings[index];
    if (text === undefined) throw this.corrupt(`interned string ${index} does not exist`);
    return text;
  }

  /** A dotted name (module or entity), its segments joined with `.`. */
  dotted(index: number): string {
    const known = this.#dotted[index];
    if (known !== undefined) return known;
    const name = this.#pkg.internedDottedNames[index];
    if (name === undefined) throw this.corrupt(`interned dotted name ${index} does not exist`);
    const text = name.segmentsInternedStr.map((s) => this.string(s)).join('.');
    if (text === '') throw this.corrupt(`interned dotted name ${index} is empty`);
    this.#dotted[index] = text;
    return text;
  }

  /** The absolute id a package reference names. */
  packageId(ref: SelfOrImportedPackageId | undefined): string {
    switch (ref?.Sum.case) {
      case 'selfPackageId':
        return this.#packageId;
      case 'importedPackageIdInternedStr':
        return this.#checkedId(this.string(ref.Sum.value));
      case 'packageImportId': {
        const imports = this.#pkg.ImportsSum;
        const id =
          imports.case === 'packageImports'
            ? imports.value.importedPackages[ref.Sum.value]
            : undefined;
        if (id === undefined) throw this.corrupt(`package import ${ref.Sum.value} does not exist`);
        return this.#checkedId(id);
      }
      default:
        throw this.corrupt('a reference names no package');
    }
  }

  /** A type constructor (or synonym) reference, absolute. */
  typeConRef(id: Pick<TypeConId, 'module' | 'nameInternedDname'> | undefined): TypeConRef {
    if (id?.module === undefined) throw this.corrupt('a type reference names no module');
    return {
      packageId: this.packageId(id.module.packageId),
      module: this.dotted(id.module.moduleNameInternedDname),
      name: this.dotted(id.nameInternedDname),
    };
  }

  corrupt(problem: string): DamlLfError {
    return new DamlLfError(
      'ARCHIVE_CORRUPT',
      this.#where,
      `package ${this.#packageId} is not a valid Daml-LF 2 package: ${problem}`,
    );
  }

  #checkedId(id: string): string {
    if (!isPackageId(id)) {
      throw this.corrupt(`it refers to package "${id.slice(0, 80)}", which is not a package id`);
    }
    return id;
  }
}
