import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256Hex } from '../core/sha256-hex.js';

/**
 * Daml packages read from the participant, kept on disk in the state directory by package id
 * (`<state.dir>/packages/<id>.payload`), so a restart does not download them again. A package
 * id is the sha256 of its archive payload, so an entry never goes stale, and every read checks
 * the hash: a truncated, corrupted or foreign file (another package under this id's name) is
 * reported as missing and downloaded again, never trusted.
 *
 * Why files and not the SQLite store: the cache is written by `validate` and `packages list` as
 * well as by a running bot, and the store has one writer (the bot holds its lock while it runs).
 * Content-addressed files need no lock: each is written to a temporary name and renamed into
 * place, so a reader sees a whole file or none, and two processes writing the same id write the
 * same bytes. What is stored is the payload exactly as `GET /v2/packages/{id}` sends it (the
 * bytes the id is the hash of), not a re-encoded archive.
 */

/** The cache's directory inside a state directory. */
export const PACKAGE_CACHE_DIR = 'packages';

const PACKAGE_ID = /^[0-9a-f]{64}$/;
const SUFFIX = '.payload';

export type PackageArchiveCacheOptions = {
  /** The state directory (`state.dir`); the cache is its `packages/` subdirectory. */
  readonly stateDir: string;
  /** A cached file larger than this is not read (it cannot be a package the reader accepts). */
  readonly maxBytes: number;
};

/** Why a cached file was not used (for a log line). */
export type CacheMiss = 'absent' | 'too-large' | 'hash-mismatch';

export type CachedPayload =
  | { readonly found: true; readonly payload: Uint8Array }
  | { readonly found: false; readonly why: CacheMiss };

export class PackageArchiveCache {
  /** Absolute or as given: `<stateDir>/packages`. */
  readonly dir: string;
  readonly #maxBytes: number;

  constructor(options: PackageArchiveCacheOptions) {
    this.dir = join(options.stateDir, PACKAGE_CACHE_DIR);
    this.#maxBytes = options.maxBytes;
  }

  /** The file an id is kept in. Only ever built from a checked id (no path tricks). */
  fileOf(packageId: string): string {
    if (!PACKAGE_ID.test(packageId)) {
      throw new RangeError(`not a package id: ${packageId.slice(0, 80)}`);
    }
    return join(this.dir, `${packageId}${SUFFIX}`);
  }

  /**
   * The payload of `packageId` if the cache has it whole: its sha256 must be the id. Any other
   * file, or a read error (a file removed meanwhile), is a miss.
   */
  async read(packageId: string): Promise<CachedPayload> {
    const file = this.fileOf(packageId);
    let handle;
    try {
      handle = await open(file, 'r');
    } catch {
      return { found: false, why: 'absent' };
    }
    try {
      const { size } = await handle.stat();
      if (size > this.#maxBytes) return { found: false, why: 'too-large' };
      const payload = await handle.readFile();
      if (sha256Hex(payload) !== packageId) return { found: false, why: 'hash-mismatch' };
      return { found: true, payload };
    } catch {
      return { found: false, why: 'absent' };
    } finally {
      await handle.close();
    }
  }

  /**
   * Keeps `payload` as the package `packageId` (checked: a payload that is not that package is
   * refused with a RangeError, as a caller's mistake). Written to a temporary file in the same
   * directory, then renamed over the final name. Throws the file system's error (a read-only
   * state directory, a full disk): the caller decides whether a cache that cannot be written
   * matters.
   */
  async write(packageId: string, payload: Uint8Array): Promise<void> {
    const file = this.fileOf(packageId);
    if (sha256Hex(payload) !== packageId) {
      throw new RangeError(`the payload given for ${packageId} is another package`);
    }
    await mkdir(this.dir, { recursive: true });
    const temp = `${file}.${randomBytes(8).toString('hex')}.tmp`;
    try {
      const handle = await open(temp, 'wx');
      try {
        await handle.writeFile(payload);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, file);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }
}
