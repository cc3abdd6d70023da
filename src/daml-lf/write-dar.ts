import { zipSync, type Zippable } from 'fflate';
import { MANIFEST_ENTRY, manifestText } from './dar-manifest.js';
import type { PackageArchive } from './read-dalf.js';

export type WriteDarOptions = {
  /** The main package (the manifest's `Main-Dalf`). */
  readonly main: PackageArchive;
  /** The packages it depends on (each id once; the main package's id is skipped). */
  readonly dependencies?: readonly PackageArchive[];
};

/**
 * A fixed time for every entry, so the same packages give the same DAR bytes. Local time: a zip
 * stores the local date and time fields, which are then the same in every time zone.
 */
const ENTRY_TIME = new Date(2000, 0, 1);

/**
 * DAR bytes: the packages as `.dalf` entries under one directory named after the main package,
 * each file named `<name>-<version>-<id>.dalf` as `daml build` names them, and a
 * `META-INF/MANIFEST.MF` with `Main-Dalf` and `Dalfs`. Deterministic. What `readDar` reads back.
 */
export function writeDar(options: WriteDarOptions): Uint8Array {
  const { main } = options;
  const dir = `${main.signature.name}-${main.signature.version}-${main.packageId}`;
  const entryOf = (p: PackageArchive): string =>
    `${dir}/${p.signature.name}-${p.signature.version}-${p.packageId}.dalf`;
  const packages = [main];
  const seen = new Set([main.packageId]);
  for (const p of options.dependencies ?? []) {
    if (!seen.has(p.packageId)) {
      seen.add(p.packageId);
      packages.push(p);
    }
  }
  const files: Zippable = {
    [MANIFEST_ENTRY]: new TextEncoder().encode(
      manifestText([
        ['Manifest-Version', '1.0'],
        ['Created-By', 'ledgerbot'],
        ['Name', `${main.signature.name}-${main.signature.version}`],
        ['Main-Dalf', entryOf(main)],
        ['Dalfs', packages.map(entryOf).join(', ')],
        ['Format', 'daml-lf'],
        ['Encryption', 'non-encrypted'],
      ]),
    ),
  };
  for (const p of packages) files[entryOf(p)] = p.bytes;
  return zipSync(files, { mtime: ENTRY_TIME });
}
