import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { systemClock, type Clock } from '../core/clock.js';
import { DEFAULTS } from '../core/defaults.js';
import { SQLITE_MIGRATIONS, type SqliteMigration } from './sqlite-migrations.js';
import { SqliteStore } from './sqlite-store.js';
import type { JournalTransfer } from './journal-transfer.js';
import type { Store } from './store.js';
import { StoreError } from './store-error.js';
import { acquireStoreLock, type StoreLock } from './store-lock.js';
import { WalCheckpointer } from './wal-checkpointer.js';

/** The file name inside a state directory. */
export const SQLITE_STORE_FILE = 'ledgerbot.sqlite';

export type SqliteStoreOptions = (
  { readonly dir: string; readonly path?: never } | { readonly path: string; readonly dir?: never }
) & {
  readonly clock?: Clock;
  /**
   * `normal` (default) or `full`. In WAL mode both keep the file consistent through a process
   * crash; they differ only on power loss or an OS crash, where `normal` may lose the last
   * commits. That never lets the checkpoint get ahead of the intents: both live in the same
   * database and move in the same transactions, and WAL frames replay in order, so a lost
   * commit takes its checkpoint move with it. The bot then replays a few events and the
   * deterministic commandIds plus ledger dedup make that harmless. `full` fsyncs every commit.
   */
  readonly synchronous?: 'normal' | 'full';
  /**
   * How long a statement waits for another connection's lock.
   * @default DEFAULTS.store.busyTimeoutMs (5 s)
   */
  readonly busyTimeoutMs?: number;
  /**
   * Hold the store's single-writer lock (see `acquireStoreLock`) until `close`, so a second
   * writer pointed at the same state directory fails to open it (STORE_LOCKED) instead of
   * working on shared state. Readers (`readonly`) are not kept out: they read the WAL's last
   * commit while the writer goes on. Default false.
   */
  readonly exclusive?: boolean;
  /**
   * Group commit: the batches of one event-loop turn share one transaction, committed in a
   * `setImmediate` callback (see Store.batch). The bot turns it on: it cuts a commit per
   * intent state change to a commit per turn. Default false.
   */
  readonly groupCommit?: boolean | { readonly windowMs: number };
  /**
   * WAL checkpoints on a thread of their own (see WalCheckpointer) instead of inside the commit
   * that crosses SQLite's 1,000 pages, where their fsyncs block the event loop. The bot turns it
   * on. Default false.
   */
  readonly checkpointThread?: boolean | { readonly onFailure: (reason: string) => void };
  /**
   * Log rows after which a commit folds the journal's log into its compact form.
   * @default FOLD_AFTER_LOG_ROWS (500)
   */
  readonly foldAfterLogRows?: number;
  /** For tests of migrations; default: all of them. */
  readonly migrations?: readonly SqliteMigration[];
  /**
   * Open an existing store without writing to it (no directory or file is created, no
   * migration runs; writes throw STORE_READ_ONLY): for operator tools that inspect a running
   * bot's state. It replays the journal's log in memory, again whenever the writer commits.
   */
  readonly readonly?: boolean;
};

/**
 * Opens (creating if needed) a SQLite store and brings its schema up to date.
 *
 * Replicas: every replica has its own state directory. Two bots never share a store; they agree
 * through the ledger (the same deterministic commandIds), not through this file. Even if two
 * processes are pointed at one file by mistake, SQLite's locking keeps it uncorrupted (the busy
 * timeout makes them wait for each other), and `exclusive` turns the mistake into an error.
 */
export function openSqliteStore(options: SqliteStoreOptions): Store & JournalTransfer {
  const path = options.path ?? join(options.dir, SQLITE_STORE_FILE);
  const clock = options.clock ?? systemClock;
  let db: Database.Database | undefined;
  let lock: StoreLock | undefined;
  try {
    if (options.readonly === true) {
      db = new Database(path, {
        readonly: true,
        fileMustExist: true,
        timeout: options.busyTimeoutMs ?? DEFAULTS.store.busyTimeoutMs,
      });
      // Read, never migrated: a store a newer ledgerbot wrote is refused, not misread.
      refuseNewer(db, options.migrations ?? SQLITE_MIGRATIONS);
      return SqliteStore.open({ db, clock, path, readonly: true });
    }
    if (options.dir !== undefined) mkdirSync(options.dir, { recursive: true });
    // Before the store is opened: a second writer must not even migrate it.
    if (options.exclusive === true) lock = acquireStoreLock(path);
    db = new Database(path, { timeout: options.busyTimeoutMs ?? DEFAULTS.store.busyTimeoutMs });
    const mode = db.pragma('journal_mode = WAL', { simple: true }) as string;
    if (mode.toLowerCase() !== 'wal') {
      throw new Error(`the file system does not support WAL mode (got ${mode})`);
    }
    db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    db.pragma('foreign_keys = ON');
    migrate(db, options.migrations ?? SQLITE_MIGRATIONS, clock);
    const held = lock;
    const scheduleCommit = groupCommitScheduler(options.groupCommit);
    const thread = options.checkpointThread;
    const checkpointer =
      thread === undefined || thread === false
        ? undefined
        : new WalCheckpointer({
            db,
            path,
            clock,
            busyTimeoutMs: options.busyTimeoutMs ?? DEFAULTS.store.busyTimeoutMs,
            ...(thread === true ? {} : { onFailure: thread.onFailure }),
          });
    return SqliteStore.open({
      db,
      clock,
      path,
      ...(checkpointer === undefined ? {} : { checkpointer }),
      ...(scheduleCommit === undefined ? {} : { scheduleCommit }),
      ...(options.foldAfterLogRows === undefined
        ? {}
        : { foldAfterLogRows: options.foldAfterLogRows }),
      ...(held === undefined ? {} : { onClose: () => held.release() }),
    });
  } catch (err) {
    db?.close();
    lock?.release();
    if (err instanceof StoreError) throw err;
    throw new StoreError(
      'STORE_OPEN_FAILED',
      `cannot open the state store ${path}: ${(err as Error).message}; check that it is a ledgerbot state file, that the directory is writable, and that no other ledgerbot uses it`,
      { cause: err },
    );
  }
}

/** The store's schema version; STORE_SCHEMA_TOO_NEW when this build does not know it. */
function refuseNewer(db: Database.Database, migrations: readonly SqliteMigration[]): number {
  const current =
    db.prepare<[], { v: number | null }>('SELECT max(version) AS v FROM schema_version').get()?.v ??
    0;
  const latest = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  if (current > latest) {
    throw new StoreError(
      'STORE_SCHEMA_TOO_NEW',
      `the state store has schema version ${current}, but this ledgerbot knows only up to ${latest}: run a newer ledgerbot, or point state.dir at a fresh directory`,
    );
  }
  return current;
}

function migrate(db: Database.Database, migrations: readonly SqliteMigration[], clock: Clock) {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
  );
  const current = refuseNewer(db, migrations);
  const record = db.prepare<[number, number]>(
    'INSERT INTO schema_version (version, applied_at) VALUES (?, ?)',
  );
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      record.run(m.version, clock.now());
    }).immediate();
  }
}

function groupCommitScheduler(
  groupCommit: SqliteStoreOptions['groupCommit'],
): ((commit: () => void) => void) | undefined {
  if (groupCommit === undefined || groupCommit === false) return undefined;
  const windowMs = groupCommit === true ? 0 : groupCommit.windowMs;
  if (windowMs <= 0) return (commit) => setImmediate(commit);
  return (commit) => setTimeout(commit, windowMs);
}
