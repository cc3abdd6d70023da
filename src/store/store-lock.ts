import Database from 'better-sqlite3';
import { once } from '../core/once.js';
import { StoreError } from './store-error.js';

/** The writer's lock of a state store: held while a process may write the store. */
export type StoreLock = {
  readonly path: string;
  /** Lets the lock go. Idempotent. */
  release(): void;
};

/** The lock file of the store at `storePath` (next to it). */
export function storeLockPath(storePath: string): string {
  return `${storePath}.lock`;
}

/**
 * Takes the single-writer lock of the store at `storePath`, or throws StoreError STORE_LOCKED at
 * once when another connection (another process, or another store in this one) holds it.
 *
 * The lock is SQLite's own exclusive lock on a small file next to the store, not on the store:
 * holding the store itself exclusively (`locking_mode = EXCLUSIVE`) also kept every reader out,
 * so `ledgerbot schedule` and the other read-only commands failed with "database is locked"
 * while the bot ran. The operating system drops the lock when its process dies, even on SIGKILL,
 * so a crash never leaves a stale lock behind (unlike a PID file).
 */
export function acquireStoreLock(storePath: string): StoreLock {
  const path = storeLockPath(storePath);
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    // The exclusive lock is taken here and, in this locking mode, kept until close.
    db.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (err) {
    db?.close();
    if ((err as { code?: unknown }).code === 'SQLITE_BUSY') {
      throw new StoreError(
        'STORE_LOCKED',
        `the state store ${storePath} is in use by another ledgerbot process (a running bot, or a CLI command writing to it)`,
        { cause: err },
      );
    }
    throw err;
  }
  const held = db;
  return { path, release: once(() => held.close()) };
}
