import type * as FsPromises from 'node:fs/promises';
import { mkdtemp, rename, rm, truncate, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuthError } from '../../../src/ledger/auth/auth-error.js';
import { TokenFileAuth } from '../../../src/ledger/auth/token-file-auth.js';

// Pass-through to the real fs, counting reads so the stat-based cache is observable.
const reads = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof FsPromises>();
  return {
    ...real,
    readFile: (...args: Parameters<typeof real.readFile>) => {
      reads.count++;
      return real.readFile(...args);
    },
  };
});

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ledgerbot-token-'));
  file = join(dir, 'token');
  reads.count = 0;
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function authError(p: Promise<unknown>): Promise<AuthError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AuthError);
  return err as AuthError;
}

describe('TokenFileAuth', () => {
  it('reads and trims the token, and re-reads only when the file changes', async () => {
    await writeFile(file, '  token-one\n');
    const auth = new TokenFileAuth(file);
    expect(await auth.token()).toBe('token-one');
    expect(await auth.token()).toBe('token-one');
    expect(reads.count).toBe(1);
    await writeFile(file, 'token-number-two\n');
    expect(await auth.token()).toBe('token-number-two');
    expect(reads.count).toBe(2);
  });

  it('sees a same-size rewrite through its modification time', async () => {
    await writeFile(file, 'token-A');
    const auth = new TokenFileAuth(file);
    expect(await auth.token()).toBe('token-A');
    await writeFile(file, 'token-B');
    await utimes(file, new Date(2030, 0, 1), new Date(2030, 0, 1));
    expect(await auth.token()).toBe('token-B');
  });

  it('sees an atomic replace (rename over the file, as mounted secrets rotate)', async () => {
    await writeFile(file, 'token-A');
    const auth = new TokenFileAuth(file);
    expect(await auth.token()).toBe('token-A');
    await writeFile(join(dir, 'next'), 'token-C');
    await rename(join(dir, 'next'), file);
    expect(await auth.token()).toBe('token-C');
  });

  it('re-reads after invalidate()', async () => {
    await writeFile(file, 'token-A');
    const auth = new TokenFileAuth(file);
    await auth.token();
    auth.invalidate();
    await auth.token();
    expect(reads.count).toBe(2);
  });

  it('a missing file is AUTH_TOKEN_FILE_MISSING naming the path', async () => {
    const err = await authError(new TokenFileAuth(file).token());
    expect(err.code).toBe('AUTH_TOKEN_FILE_MISSING');
    expect(err.message).toContain(file);
  });

  it('an empty or blank file is AUTH_TOKEN_FILE_EMPTY naming the path', async () => {
    await writeFile(file, ' \n\t');
    const err = await authError(new TokenFileAuth(file).token());
    expect(err.code).toBe('AUTH_TOKEN_FILE_EMPTY');
    expect(err.message).toContain(file);
  });

  it('keeps the previous token while a writer has truncated the file', async () => {
    await writeFile(file, 'token-A');
    const auth = new TokenFileAuth(file);
    await auth.token();
    await truncate(file, 0);
    expect(await auth.token()).toBe('token-A');
    await writeFile(file, 'token-B-longer');
    expect(await auth.token()).toBe('token-B-longer');
  });

  it('an unreadable path is AUTH_TOKEN_FILE_UNREADABLE naming the path and the reason', async () => {
    // A directory cannot be read as a file even by root, unlike a chmod 000 file.
    const err = await authError(new TokenFileAuth(dir).token());
    expect(err.code).toBe('AUTH_TOKEN_FILE_UNREADABLE');
    expect(err.message).toContain(dir);
    expect(err.message).toContain('EISDIR');
  });

  it('a deleted file fails even after a successful read', async () => {
    await writeFile(file, 'token-A');
    const auth = new TokenFileAuth(file);
    await auth.token();
    await rm(file);
    expect((await authError(auth.token())).code).toBe('AUTH_TOKEN_FILE_MISSING');
  });

  it('does no I/O in the constructor and fails after close()', async () => {
    const auth = new TokenFileAuth(file);
    expect(reads.count).toBe(0);
    await auth.close();
    await auth.close();
    expect((await authError(auth.token())).code).toBe('AUTH_CLOSED');
  });

  it('rejects an empty path', () => {
    expect(() => new TokenFileAuth(' ')).toThrow(AuthError);
  });
});
