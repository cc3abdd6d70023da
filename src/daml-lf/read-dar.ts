import { DamlLfError } from './daml-lf-error.js';
import { MANIFEST_ENTRY, parseManifest } from './dar-manifest.js';
import { readArchiveAt, type PackageArchive } from './read-dalf.js';
import { readZipEntries } from './read-zip-entries.js';

/** A DAR as read: every package it holds, the main one first. */
export type Dar = {
  /** The main package's id (the manifest's `Main-Dalf`). */
  readonly mainPackageId: string;
  readonly main: PackageArchive;
  /** Every package of the DAR, each id once: the main package, then the others in zip order. */
  readonly packages: readonly PackageArchive[];
};

export type ReadDarOptions = {
  /** The file the bytes came from, for messages. */
  readonly source: string;
  /**
   * Packages already read (by id), e.g. from other DARs: a DALF with one of these ids is not
   * decoded again (its hash is still checked), and the known archive is returned for it.
   */
  readonly known?: ReadonlyMap<string, PackageArchive>;
};

/** The id a DALF's entry name ends with (`…/name-1.0.0-<id>.dalf`), if it has one. */
const ID_IN_NAME = /-([0-9a-f]{64})\.dalf$/;

/**
 * A DAR's bytes (a zip with `META-INF/MANIFEST.MF` and `.dalf` archives): every DALF read and
 * checked (hash = id in the archive = id in the entry name), sizes capped (`DAR_LIMITS`). Throws a
 * `DamlLfError` naming the file and the entry. No I/O: the caller reads the file.
 */
export async function readDar(bytes: Uint8Array, options: ReadDarOptions): Promise<Dar> {
  const { source } = options;
  const entries = await readZipEntries(
    bytes,
    source,
    (name) => name === MANIFEST_ENTRY || name.endsWith('.dalf'),
  );
  const manifestBytes = entries.get(MANIFEST_ENTRY);
  if (manifestBytes === undefined) {
    throw new DamlLfError(
      'DAR_CORRUPT',
      { source },
      `no ${MANIFEST_ENTRY}: not a DAR (a DAR is a zip made by \`daml build\`)`,
    );
  }
  const mainEntry = parseManifest(new TextDecoder().decode(manifestBytes)).get('Main-Dalf');
  if (mainEntry === undefined || !entries.has(mainEntry)) {
    throw new DamlLfError(
      'DAR_CORRUPT',
      { source, entry: MANIFEST_ENTRY },
      mainEntry === undefined
        ? 'the manifest has no Main-Dalf'
        : `the manifest's Main-Dalf "${mainEntry}" is not in the DAR`,
    );
  }
  const byId = new Map<string, PackageArchive>();
  const read = (name: string, data: Uint8Array): PackageArchive => {
    const archive = readArchiveAt(
      data,
      { source, entry: name },
      ID_IN_NAME.exec(name)?.[1],
      options.known,
    );
    if (!byId.has(archive.packageId)) byId.set(archive.packageId, archive);
    return archive;
  };
  const main = read(mainEntry, entries.get(mainEntry)!);
  for (const [name, data] of entries) {
    if (name !== MANIFEST_ENTRY && name !== mainEntry) read(name, data);
  }
  return Object.freeze({
    mainPackageId: main.packageId,
    main,
    packages: Object.freeze([...byId.values()]),
  });
}
