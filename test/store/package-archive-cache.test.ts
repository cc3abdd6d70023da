import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/sha256-hex.js';
import { PackageArchiveCache } from '../../src/store/package-archive-cache.js';
import { TestScope } from '../support/test-scope.js';

let scope: TestScope;
beforeEach(() => {
  scope = new TestScope();
});
afterEach(() => scope.close());

const A = randomBytes(2000);
const B = randomBytes(3000);
const ID_A = sha256Hex(A);
const ID_B = sha256Hex(B);

function cacheIn(stateDir: string, maxBytes = 1024 * 1024): PackageArchiveCache {
  return new PackageArchiveCache({ stateDir, maxBytes });
}

describe('PackageArchiveCache', () => {
  it('keeps a payload by id in <state.dir>/packages and reads it back', async () => {
    const state = join(scope.tempDir(), 'state'); // not there yet: the cache creates it
    const cache = cacheIn(state);
    expect(await cache.read(ID_A)).toEqual({ found: false, why: 'absent' });
    await cache.write(ID_A, A);
    expect(cache.fileOf(ID_A)).toBe(join(state, 'packages', `${ID_A}.payload`));
    expect(readFileSync(cache.fileOf(ID_A)).equals(A)).toBe(true);
    const read = await cache.read(ID_A);
    expect(read.found && Buffer.from(read.payload).equals(A)).toBe(true);
    // Nothing but the final file is left behind.
    expect(readdirSync(cache.dir)).toEqual([`${ID_A}.payload`]);
  });

  it('ignores a truncated, damaged or foreign file: a miss, never the wrong bytes', async () => {
    const cache = cacheIn(scope.tempDir());
    await cache.write(ID_A, A);
    writeFileSync(cache.fileOf(ID_A), A.subarray(0, 1000)); // truncated
    expect(await cache.read(ID_A)).toEqual({ found: false, why: 'hash-mismatch' });
    const flipped = Buffer.from(A);
    flipped[7] = (flipped[7] ?? 0) ^ 1;
    writeFileSync(cache.fileOf(ID_A), flipped); // one bit
    expect(await cache.read(ID_A)).toEqual({ found: false, why: 'hash-mismatch' });
    writeFileSync(cache.fileOf(ID_A), B); // another package under this id's name
    expect(await cache.read(ID_A)).toEqual({ found: false, why: 'hash-mismatch' });
    // Writing it again repairs the entry.
    await cache.write(ID_A, A);
    expect((await cache.read(ID_A)).found).toBe(true);
  });

  it('does not read a file larger than the largest package', async () => {
    const cache = cacheIn(scope.tempDir(), 1000);
    mkdirSync(cache.dir, { recursive: true });
    writeFileSync(cache.fileOf(ID_A), A);
    expect(await cache.read(ID_A)).toEqual({ found: false, why: 'too-large' });
  });

  it('refuses to keep a payload under another id, and ids that are not package ids', async () => {
    const cache = cacheIn(scope.tempDir());
    await expect(cache.write(ID_A, B)).rejects.toThrow(/is another package/);
    expect(() => cache.fileOf('../../etc/passwd')).toThrow(RangeError);
    expect(() => cache.fileOf(ID_A.toUpperCase())).toThrow(RangeError);
    await expect(cache.read('not-an-id')).rejects.toThrow(RangeError);
  });

  it('two writers of the same id leave one whole file', async () => {
    const cache = cacheIn(scope.tempDir());
    const other = cacheIn(join(cache.dir, '..'));
    await Promise.all([cache.write(ID_B, B), other.write(ID_B, B), cache.write(ID_B, B)]);
    expect(readdirSync(cache.dir)).toEqual([`${ID_B}.payload`]);
    expect((await other.read(ID_B)).found).toBe(true);
  });

  it('a cache it cannot write is the file system error, nothing half-written', async () => {
    const state = scope.tempDir();
    const cache = cacheIn(state);
    writeFileSync(cache.dir, 'a file where the cache directory goes'); // fails as root too
    await expect(cache.write(ID_A, A)).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readdirSync(state)).toEqual(['packages']);
    expect(await cache.read(ID_A)).toEqual({ found: false, why: 'absent' });
  });
});
