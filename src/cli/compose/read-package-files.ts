import { open, readdir, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { formatBytes } from '../../core/source/guard-text.js';
import { DamlLfError } from '../../daml-lf/daml-lf-error.js';
import { DAR_LIMITS } from '../../daml-lf/dar-limits.js';
import { readArchiveAt, type PackageArchive } from '../../daml-lf/read-dalf.js';
import { readDar } from '../../daml-lf/read-dar.js';
import { UsageError } from '../usage-error.js';

/**
 * Daml packages from files the user names (`ledger.packages`, `--dar`): DAR or DALF files, or
 * directories of them. Here, in the CLI, because only the CLI reads files the user names; the
 * bytes go to the Daml-LF reader (`src/daml-lf/`), which does no I/O.
 *
 * A file is a DAR when it is a zip (by its first bytes) or is named `.dar`, else a DALF. A
 * directory gives its `*.dar` and `*.dalf` files (not its subdirectories), sorted. Every mistake
 * (no such file, an empty directory, a file over the DAR size limit, a corrupt or altered
 * package) is a UsageError (exit 2) naming the file and where it was named.
 */

/** A file or directory to read, and where the user named it (for messages). */
export type PackageFileInput = {
  readonly path: string;
  /** `bot.config.yaml:5:7` for a config entry, `--dar` for a flag. */
  readonly namedAt: string;
};

/** The packages of one file, the file's main package first (a DAR's `Main-Dalf`). */
export type PackageFile = {
  readonly file: string;
  readonly kind: 'dar' | 'dalf';
  readonly packages: readonly PackageArchive[];
};

const PACKAGE_EXTENSIONS = new Set(['.dar', '.dalf']);
/** `PK\x03\x04` (a local file header) or `PK\x05\x06` (an empty zip's end record). */
const isZip = (b: Uint8Array): boolean =>
  b[0] === 0x50 && b[1] === 0x4b && ((b[2] === 3 && b[3] === 4) || (b[2] === 5 && b[3] === 6));
/** A DALF named as inside a DAR (`name-1.0.0-<id>.dalf`) must have that id. */
const ID_IN_NAME = /-([0-9a-f]{64})\.dalf$/;

/**
 * Reads package files for one process: a package id met before (in another DAR: every DAR
 * carries the same standard library packages, or at an earlier reload) is not decoded again.
 */
export class PackageFileReader {
  /** Every package read so far, by id. */
  readonly known = new Map<string, PackageArchive>();

  /** The packages of every input, in the order given (a directory's files sorted). */
  async read(inputs: readonly PackageFileInput[]): Promise<PackageFile[]> {
    const out: PackageFile[] = [];
    for (const input of inputs) {
      for (const file of await filesOf(input)) out.push(await this.#readFile(file, input));
    }
    return out;
  }

  async #readFile(file: string, input: PackageFileInput): Promise<PackageFile> {
    const bytes = await readBounded(file, input);
    const dar = isZip(bytes) || extname(file).toLowerCase() === '.dar';
    try {
      if (dar) {
        const read = await readDar(bytes, { source: file, known: this.known });
        for (const p of read.packages) this.known.set(p.packageId, p);
        return { file, kind: 'dar', packages: read.packages };
      }
      // Hash checked, decoded only when its id is new (as readDar does for a DAR's DALFs).
      const archive = readArchiveAt(
        bytes,
        { source: file },
        ID_IN_NAME.exec(file)?.[1],
        this.known,
      );
      this.known.set(archive.packageId, archive);
      return { file, kind: 'dalf', packages: [archive] };
    } catch (err) {
      if (err instanceof DamlLfError) {
        throw new UsageError(`${input.namedAt}: ${err.message} [${err.code}]`, { cause: err });
      }
      throw err;
    }
  }
}

async function filesOf(input: PackageFileInput): Promise<string[]> {
  const { path } = input;
  let isDir: boolean;
  try {
    isDir = (await stat(path)).isDirectory();
  } catch (err) {
    throw new UsageError(`${input.namedAt}: cannot read ${path}: ${why(err)}`, { cause: err });
  }
  if (!isDir) return [path];
  const names = (await readdir(path, { withFileTypes: true }))
    .filter((e) => !e.isDirectory() && PACKAGE_EXTENSIONS.has(extname(e.name).toLowerCase()))
    .map((e) => e.name)
    .sort();
  if (names.length === 0) {
    throw new UsageError(
      `${input.namedAt}: no package in the directory ${path}: a directory is searched for *.dar and *.dalf files (not its subdirectories)`,
    );
  }
  return names.map((n) => join(path, n));
}

/** The file's bytes, refused before reading when it is larger than any DAR the reader takes. */
async function readBounded(file: string, input: PackageFileInput): Promise<Uint8Array> {
  const max = DAR_LIMITS.maxDarBytes;
  try {
    const handle = await open(file, 'r');
    try {
      const { size } = await handle.stat();
      if (size > max) {
        throw new UsageError(
          `${input.namedAt}: ${file} is ${formatBytes(size)}; the largest DAR ledgerbot reads is ${formatBytes(max)} [DAR_TOO_LARGE]`,
        );
      }
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${input.namedAt}: cannot read ${file}: ${why(err)}`, { cause: err });
  }
}

function why(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  return code === 'ENOENT'
    ? 'no such file or directory'
    : code === 'EACCES'
      ? 'permission denied'
      : (err as Error).message;
}
