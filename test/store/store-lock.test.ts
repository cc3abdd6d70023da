import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import { acquireStoreLock } from '../../src/store/store-lock.js';
import { tempDir } from '../support/temp-dir.js';
import { eventIntent } from './store-fixtures.js';

let child: ChildProcess | undefined;
let cleanup: (() => void) | undefined;

afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
  cleanup?.();
  cleanup = undefined;
});

/** A child process holding the store the way a running bot does; resolves once it wrote. */
async function holder(dir: string): Promise<{ exited: Promise<unknown> }> {
  const c = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'lock-holder-child.ts'), dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child = c;
  const exited = new Promise((resolve) => c.on('exit', resolve));
  let err = '';
  c.stderr.setEncoding('utf8').on('data', (t: string) => (err += t));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line in 30 s: ${err}`)), 30_000);
    c.stdout.setEncoding('utf8').on('data', (t: string) => {
      if (t.includes('ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(() => reject(new Error(`the holder exited: ${err}`)));
  });
  return { exited };
}

describe('the store writer lock, across processes', () => {
  it('a writing process keeps other writers out but not readers; its death frees the lock', async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const { exited } = await holder(t.dir);

    // Readers read what the holder committed, while it goes on writing.
    const reader = openSqliteStore({ dir: t.dir, readonly: true });
    try {
      expect(reader.getIntent(eventIntent(1).commandId)?.state).toBe('pending');
    } finally {
      reader.close();
    }
    // A second writer is refused at once, before it touches (or migrates) the store.
    const started = Date.now();
    expect(() => openSqliteStore({ dir: t.dir, exclusive: true })).toThrow(
      expect.objectContaining({ code: 'STORE_LOCKED' }),
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(() => acquireStoreLock(join(t.dir, 'ledgerbot.sqlite'))).toThrow(/in use by another/);

    // SIGKILL: the operating system drops the lock with the process; no stale lock is left.
    child!.kill('SIGKILL');
    await exited;
    const store = openSqliteStore({ dir: t.dir, exclusive: true });
    try {
      expect(store.listIntents().length).toBeGreaterThanOrEqual(1);
    } finally {
      store.close();
    }
  }, 60_000);
});
