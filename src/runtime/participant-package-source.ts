import { AbortError } from '../core/abort-error.js';
import { LedgerbotError } from '../core/ledgerbot-error.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { PackageSignature } from '../daml-lf/package-signature.js';
import { readPackagePayload } from '../daml-lf/read-dalf.js';
import type { CallOptions } from '../ledger/http-transport.js';
import { callOptions } from '../ledger/json-calls.js';
import type { LedgerClient } from '../ledger/ledger-client.js';
import { isPackageId } from '../ledger/package-archive.js';
import type { PackageArchiveCache } from '../store/package-archive-cache.js';
import { RuntimeError } from './runtime-error.js';

/**
 * The packages of the participant, as signatures: `GET /v2/packages` lists the ids, and only
 * the ids this process has not decoded yet are looked at: first in the on-disk cache
 * (`PackageArchiveCache`, in the state directory), then downloaded (`GET /v2/packages/{id}`)
 * and cached. Each id is decoded once per process and kept, so a reload of the rules re-lists
 * the ids and reads only the packages uploaded since.
 *
 * Why here, in runtime: it talks to the participant and writes the state directory, which is
 * the runtime's (the store layer owns the files, `src/store/package-archive-cache.ts`); the
 * decoding is the daml-lf layer's, handed bytes. Files a user names (`ledger.packages`,
 * `--dar`) are read by the CLI, which puts both together into one catalogue.
 */

/** Bytes → signature: the Daml-LF reader, given the payload `GET /v2/packages/{id}` sends. */
export type PackagePayloadDecoder = (payload: Uint8Array, packageId: string) => PackageSignature;

/** The Daml-LF reader on a participant's package (a `DamlLfError` when it cannot be read). */
const decodeParticipantPackage: PackagePayloadDecoder = (payload, packageId) =>
  readPackagePayload(payload, { source: `the participant's package ${packageId}`, packageId })
    .signature;

export type ParticipantPackageSourceOptions = {
  readonly ledger: Pick<LedgerClient, 'listPackages' | 'packageArchive'>;
  /** Where downloaded payloads are kept; absent: nothing is cached on disk. */
  readonly cache?: PackageArchiveCache;
  /** Default: the Daml-LF reader (`readPackagePayload`). */
  readonly decode?: PackagePayloadDecoder;
  readonly logger?: Logger;
  /** Downloads (and cache reads) at once. Default 4. */
  readonly concurrency?: number;
};

/** How one read went; what `validate` notes and the start-up log says. */
export type PackageReadStats = {
  /** Ids the participant listed. */
  readonly listed: number;
  /** Already decoded by this process, here or from a file (no cache read, no download). */
  readonly known: number;
  readonly fromCache: number;
  readonly downloaded: number;
  /** Cache files that were there but not used (damaged or foreign), then downloaded again. */
  readonly cacheRejected: number;
  /** Downloads the cache could not keep (a read-only or full state directory). */
  readonly cacheWriteFailures: number;
};

/** A listed package that cannot be read (an LF version ledgerbot does not read, say). */
export type UnreadablePackage = { readonly packageId: string; readonly reason: string };

export type ParticipantReadOptions = CallOptions & {
  /**
   * Ids the caller has read already (from package files): neither read nor returned, though
   * counted as listed and known.
   */
  readonly have?: ReadonlySet<string>;
};

export type ParticipantPackages = {
  /** Every listed package that could be read and is not in `have`, in the order listed. */
  readonly packages: readonly PackageSignature[];
  /** Listed but not readable: the catalogue is then not complete. */
  readonly unreadable: readonly UnreadablePackage[];
  readonly stats: PackageReadStats;
};

/** What one read counts as it goes (PackageReadStats without the listing's numbers). */
type ReadCounts = { -readonly [K in Exclude<keyof PackageReadStats, 'listed' | 'known'>]: number };
type Known = { readonly ok: true; readonly pkg: PackageSignature } | UnreadableResult;
type UnreadableResult = { readonly ok: false; readonly reason: string };

export class ParticipantPackageSource {
  readonly #options: ParticipantPackageSourceOptions;
  readonly #logger: Logger;
  /** Every id this process has read, readable or not: never read twice. */
  readonly #known = new Map<string, Known>();
  /** The read under way, if any (settled otherwise). */
  #previous: Promise<unknown> = Promise.resolve();

  constructor(options: ParticipantPackageSourceOptions) {
    this.#options = options;
    this.#logger = options.logger ?? silentLogger;
  }

  /**
   * Lists the participant's packages and returns their signatures, reading only ids not read
   * before. A failure to list or download is a RuntimeError `PACKAGES_UNREADABLE` with the
   * client's error as its cause (the caller decides: `run` exits 1, `validate` reports it); a
   * package that downloads but cannot be decoded is `unreadable`, not a failure.
   */
  read(options: ParticipantReadOptions = {}): Promise<ParticipantPackages> {
    // One read at a time: a read that overlaps another (a reload while `run` reads at start)
    // waits for it, then finds its packages known instead of reading them a second time.
    const run = (): Promise<ParticipantPackages> => this.#readNow(options);
    const next = this.#previous.then(run, run);
    this.#previous = next.catch(() => undefined);
    return next;
  }

  async #readNow(options: ParticipantReadOptions): Promise<ParticipantPackages> {
    try {
      return await this.#listAndRead(options);
    } catch (err) {
      if (err instanceof AbortError || !(err instanceof LedgerbotError)) throw err;
      throw new RuntimeError(
        'PACKAGES_UNREADABLE',
        `cannot read the participant's packages: ${err.message}`,
        { cause: err },
      );
    }
  }

  async #listAndRead(options: ParticipantReadOptions): Promise<ParticipantPackages> {
    const call = callOptions(options);
    const ids = await this.#options.ledger.listPackages(call);
    const unique = [...new Set(ids)];
    const have = options.have ?? new Set<string>();
    const missing = unique.filter((id) => !this.#known.has(id) && !have.has(id));
    const counts: ReadCounts = {
      fromCache: 0,
      downloaded: 0,
      cacheRejected: 0,
      cacheWriteFailures: 0,
    };
    await eachLimited(missing, this.#options.concurrency ?? 4, async (id) => {
      const known = await this.#readOne(id, counts, call);
      this.#known.set(id, known);
    });
    const packages: PackageSignature[] = [];
    const unreadable: UnreadablePackage[] = [];
    for (const id of unique) {
      if (have.has(id)) continue;
      const known = this.#known.get(id);
      if (known?.ok === true) packages.push(known.pkg);
      else if (known !== undefined) unreadable.push({ packageId: id, reason: known.reason });
    }
    return {
      packages,
      unreadable,
      stats: { listed: unique.length, known: unique.length - missing.length, ...counts },
    };
  }

  async #readOne(packageId: string, counts: ReadCounts, options: CallOptions): Promise<Known> {
    const { cache, ledger } = this.#options;
    let payload: Uint8Array | undefined;
    // A listed id may be anything: one that is not a package id names no cache file, and the
    // client refuses it below (PACKAGES_UNREADABLE, as without a cache).
    if (cache !== undefined && isPackageId(packageId)) {
      const cached = await cache.read(packageId);
      if (cached.found) {
        payload = cached.payload;
        counts.fromCache += 1;
      } else if (cached.why !== 'absent') {
        counts.cacheRejected += 1;
        this.#logger.warn(
          { packageId, why: cached.why, file: cache.fileOf(packageId) },
          'cached package is damaged; downloading it again',
        );
      }
    }
    if (payload === undefined) {
      // A package id is not a secret; the client refuses a malformed one before sending anything.
      payload = await ledger.packageArchive(packageId, options);
      counts.downloaded += 1;
      if (cache !== undefined) {
        try {
          await cache.write(packageId, payload);
        } catch (err) {
          counts.cacheWriteFailures += 1;
          this.#logger.warn(
            { packageId, dir: cache.dir, error: (err as Error).message },
            'cannot cache a package; it will be downloaded again next time',
          );
        }
      }
    }
    try {
      return {
        ok: true,
        pkg: (this.#options.decode ?? decodeParticipantPackage)(payload, packageId),
      };
    } catch (err) {
      if (!(err instanceof LedgerbotError)) throw err;
      this.#logger.warn(
        { packageId, error: err.message },
        'cannot read a package of the participant',
      );
      return { ok: false, reason: err.message };
    }
  }
}

/**
 * Runs `work` over `items`, at most `limit` at once. The first failure rejects, and no item is
 * started after it (those under way finish).
 */
async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
