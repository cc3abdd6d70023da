import { randomBytes } from 'node:crypto';
import { readdirSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LedgerbotError } from '../../src/core/ledgerbot-error.js';
import type { PackageSignature } from '../../src/daml-lf/package-signature.js';
import { LedgerApiError } from '../../src/ledger/ledger-api-error.js';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import {
  ParticipantPackageSource,
  type PackagePayloadDecoder,
} from '../../src/runtime/participant-package-source.js';
import { PackageArchiveCache } from '../../src/store/package-archive-cache.js';
import { FakePackageServer } from '../support/fake-package-server.js';
import { TestScope } from '../support/test-scope.js';

// The participant's packages through a real client and a real HTTP server, with the on-disk
// cache: which packages are downloaded, read from the cache or decoded, counted.

let scope: TestScope;
let server: FakePackageServer;
let client: LedgerClient;
let stateDir: string;

beforeEach(async () => {
  scope = new TestScope();
  stateDir = scope.tempDir();
  server = scope.own(await FakePackageServer.start([randomBytes(900), randomBytes(1200)]));
  server.add(randomBytes(1500));
  client = scope.own(await LedgerClient.create({ url: server.url }));
});
afterEach(() => scope.close());

/** A cache that counts the files it reads. */
class CountingCache extends PackageArchiveCache {
  reads = 0;
  override read(packageId: string) {
    this.reads += 1;
    return super.read(packageId);
  }
}

/** Stands in for the Daml-LF reader: a signature named after the id, each call counted. */
function countingDecoder(): PackagePayloadDecoder & { calls: string[] } {
  const calls: string[] = [];
  const decode = (payload: Uint8Array, packageId: string): PackageSignature => {
    calls.push(packageId);
    if (payload.length === 0) throw new LedgerbotError('ARCHIVE_CORRUPT', 'empty payload');
    return {
      packageId,
      name: `pkg-${packageId.slice(0, 6)}`,
      version: '1.0.0',
      lfVersion: '2.1',
      modules: [],
      dependencies: [],
    };
  };
  return Object.assign(decode, { calls });
}

function source(cache: PackageArchiveCache | undefined, decode: PackagePayloadDecoder) {
  return new ParticipantPackageSource({
    ledger: client,
    ...(cache === undefined ? {} : { cache }),
    decode,
  });
}

describe('ParticipantPackageSource', () => {
  it('a cold start downloads every package once and caches each by id', async () => {
    const cache = new CountingCache({ stateDir, maxBytes: 1 << 20 });
    const decode = countingDecoder();
    const got = await source(cache, decode).read();
    const ids = [...server.payloads.keys()];
    expect(got.packages.map((p) => p.packageId)).toEqual(ids);
    expect(got.unreadable).toEqual([]);
    expect(got.stats).toEqual({
      listed: 3,
      known: 0,
      fromCache: 0,
      downloaded: 3,
      cacheRejected: 0,
      cacheWriteFailures: 0,
    });
    expect([...server.downloads].sort()).toEqual([...ids].sort());
    expect(readdirSync(cache.dir).sort()).toEqual(ids.map((id) => `${id}.payload`).sort());
    expect([...decode.calls].sort()).toEqual([...ids].sort());
  });

  it('a warm start reads each package from the cache once and downloads none', async () => {
    await source(
      new PackageArchiveCache({ stateDir, maxBytes: 1 << 20 }),
      countingDecoder(),
    ).read();
    server.downloads.length = 0;
    // A new process: a new source over the same state directory.
    const cache = new CountingCache({ stateDir, maxBytes: 1 << 20 });
    const decode = countingDecoder();
    const got = await source(cache, decode).read();
    expect(got.packages).toHaveLength(3);
    expect(got.stats).toMatchObject({ listed: 3, known: 0, fromCache: 3, downloaded: 0 });
    expect(server.downloads).toEqual([]);
    expect(cache.reads).toBe(3);
    expect(decode.calls).toHaveLength(3);
    expect(new Set(decode.calls).size).toBe(3);
  });

  it('reading again in the same process re-lists and reads only the new packages', async () => {
    const cache = new CountingCache({ stateDir, maxBytes: 1 << 20 });
    const decode = countingDecoder();
    const src = source(cache, decode);
    await src.read();
    const again = await src.read();
    expect(again.stats).toMatchObject({ listed: 3, known: 3, fromCache: 0, downloaded: 0 });
    expect(again.packages).toHaveLength(3);
    expect(server.lists).toBe(2);
    expect(server.downloads).toHaveLength(3);
    expect(cache.reads).toBe(3);
    expect(decode.calls).toHaveLength(3);
    // An upload between two reads (a reload): only that package is read.
    const added = server.add(randomBytes(700));
    const third = await src.read();
    expect(third.stats).toMatchObject({ listed: 4, known: 3, downloaded: 1 });
    expect(server.downloads.at(-1)).toBe(added);
    expect(decode.calls).toHaveLength(4);
    expect(third.packages.map((p) => p.packageId)).toContain(added);
  });

  it('two reads at once (a reload while run reads at start) read each package once', async () => {
    const cache = new CountingCache({ stateDir, maxBytes: 1 << 20 });
    const decode = countingDecoder();
    const src = source(cache, decode);
    const [first, second] = await Promise.all([src.read(), src.read()]);
    expect(first.packages).toHaveLength(3);
    expect(second.packages.map((p) => p.packageId)).toEqual(first.packages.map((p) => p.packageId));
    expect(second.stats).toMatchObject({ listed: 3, known: 3, fromCache: 0, downloaded: 0 });
    expect(server.downloads).toHaveLength(3);
    expect(cache.reads).toBe(3);
    expect(decode.calls).toHaveLength(3);
  });

  it('a damaged or foreign cache file is downloaded again and repaired, never trusted', async () => {
    const first = new PackageArchiveCache({ stateDir, maxBytes: 1 << 20 });
    await source(first, countingDecoder()).read();
    const [a, b] = [...server.payloads.keys()] as [string, string];
    writeFileSync(first.fileOf(a), Buffer.from('not a package'));
    writeFileSync(first.fileOf(b), server.payloads.get(a) ?? new Uint8Array()); // foreign
    server.downloads.length = 0;
    const decode = countingDecoder();
    const got = await source(
      new PackageArchiveCache({ stateDir, maxBytes: 1 << 20 }),
      decode,
    ).read();
    expect(got.stats).toMatchObject({ fromCache: 1, downloaded: 2, cacheRejected: 2 });
    expect([...server.downloads].sort()).toEqual([a, b].sort());
    expect(got.packages.map((p) => p.packageId)).toEqual([...server.payloads.keys()]);
    const third = await source(
      new PackageArchiveCache({ stateDir, maxBytes: 1 << 20 }),
      decode,
    ).read();
    expect(third.stats).toMatchObject({ fromCache: 3, downloaded: 0, cacheRejected: 0 });
  });

  it('works without a cache, and when the cache cannot be written', async () => {
    const none = await source(undefined, countingDecoder()).read();
    expect(none.stats).toMatchObject({ downloaded: 3, fromCache: 0 });
    writeFileSync(`${stateDir}/packages`, 'in the way');
    const blocked = await source(
      new PackageArchiveCache({ stateDir, maxBytes: 1 << 20 }),
      countingDecoder(),
    ).read();
    expect(blocked.packages).toHaveLength(3);
    expect(blocked.stats).toMatchObject({ downloaded: 3, cacheWriteFailures: 3 });
  });

  it('a package it cannot decode is unreadable, reported, and not read again', async () => {
    const empty = server.add(new Uint8Array());
    const decode = countingDecoder();
    const src = source(undefined, decode);
    const got = await src.read();
    expect(got.packages).toHaveLength(3);
    expect(got.unreadable).toEqual([{ packageId: empty, reason: 'empty payload' }]);
    const again = await src.read();
    expect(again.unreadable).toHaveLength(1);
    expect(decode.calls.filter((id) => id === empty)).toHaveLength(1);
  });

  it('a participant that fails is the client’s error; the next read asks again', async () => {
    server.failWith = 503;
    const src = source(undefined, countingDecoder());
    const err = await src.read().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'PACKAGES_UNREADABLE' });
    expect((err as Error).cause).toBeInstanceOf(LedgerApiError);
    expect((err as Error).message).toMatch(/^cannot read the participant's packages: /);
    server.failWith = undefined;
    // A listed package whose bytes are not its id (a broken proxy) fails the read too.
    const ghost = 'e'.repeat(64);
    server.payloads.set(ghost, new Uint8Array([1, 2, 3]));
    await expect(src.read()).rejects.toMatchObject({
      code: 'PACKAGES_UNREADABLE',
      cause: { failure: 'bad-response' },
    });
    server.payloads.delete(ghost);
    const ok = await src.read();
    expect(ok.packages).toHaveLength(3);
  });

  it('a listed id that is not a package id fails the read the same with a cache as without', async () => {
    server.payloads.set('../not-a-package-id', new Uint8Array([1, 2, 3]));
    for (const cache of [undefined, new PackageArchiveCache({ stateDir, maxBytes: 1 << 20 })]) {
      const err = await source(cache, countingDecoder())
        .read()
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'PACKAGES_UNREADABLE', cause: { code: 'LEDGER_USAGE' } });
      expect((err as Error).message).toContain('"../not-a-package-id" is not a package id');
    }
    expect(server.downloads).not.toContain('../not-a-package-id');
    expect(readdirSync(stateDir)).toEqual([]);
  });
});

describe('ParticipantPackageSource with packages read elsewhere', () => {
  it('neither reads nor returns the ids the caller has already', async () => {
    const decode = countingDecoder();
    const [first] = [...server.payloads.keys()] as [string];
    const got = await source(undefined, decode).read({ have: new Set([first]) });
    expect(got.packages.map((p) => p.packageId)).not.toContain(first);
    expect(got.packages).toHaveLength(2);
    expect(got.stats).toMatchObject({ listed: 3, known: 1, downloaded: 2 });
    expect(server.downloads).not.toContain(first);
    expect(decode.calls).not.toContain(first);
  });
});
