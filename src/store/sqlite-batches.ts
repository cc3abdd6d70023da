import type BetterSqlite3 from 'better-sqlite3';
import { StoreError } from './store-error.js';

/** Runs `commit` later, once: at the end of the event-loop turn, or after a window. */
export type CommitScheduler = (commit: () => void) => void;

/**
 * The transactions of the SQLite store: `Store.batch`, `sync` and `flush`, with or without group
 * commit. Changes that move the checkpoint mark the batch unsettled (`markUnsettled`); `settle`
 * (the checkpoint's recomputation) runs once before they commit: at the end of the outermost
 * batch, or just before a group commits.
 */
export class SqliteBatches {
  readonly #db: BetterSqlite3.Database;
  readonly #settle: () => void;
  readonly #tx: (fn: () => unknown) => unknown;
  /** Set: batches join one group transaction, committed when this callback runs it. */
  readonly #scheduleCommit: CommitScheduler | undefined;
  #depth = 0;
  #unsettled = false;
  /** A group transaction is open (only with `#scheduleCommit`). */
  #grouped = false;
  /** Waiting for the open group to commit (see `sync`). */
  #syncWaiters: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  /** A group commit failed: every later write is refused (see `commitGroup`). */
  #failed: StoreError | undefined;

  constructor(
    db: BetterSqlite3.Database,
    settle: () => void,
    scheduleCommit: CommitScheduler | undefined,
  ) {
    this.#db = db;
    this.#settle = settle;
    this.#scheduleCommit = scheduleCommit;
    this.#tx = db.transaction((fn: () => unknown) => {
      this.#depth++;
      try {
        const result = fn();
        if (isThenable(result)) {
          throw new StoreError(
            'STORE_ASYNC_BATCH',
            'store.batch(fn) got a promise: the batch must be synchronous, so await before or after it',
          );
        }
        // In a group the checkpoint is recomputed once, just before the group commits.
        if (this.#depth === 1 && this.#unsettled && !this.#grouped) this.#settle();
        return result;
      } finally {
        this.#depth--;
        if (this.#depth === 0 && !this.#grouped) this.#unsettled = false;
      }
    });
  }

  /** Something the checkpoint depends on changed in the running batch. */
  markUnsettled(): void {
    this.#unsettled = true;
  }

  /** An open group holds changes the checkpoint has not been recomputed for. */
  get unsettledGroup(): boolean {
    return this.#grouped && this.#unsettled;
  }

  batch<T>(fn: () => T): T {
    if (this.#failed !== undefined) throw this.#failed;
    if (this.#scheduleCommit !== undefined && !this.#grouped && !this.#db.inTransaction) {
      this.#db.exec('BEGIN');
      this.#grouped = true;
      this.#scheduleCommit(() => this.commitGroup());
    }
    // Inside a group, better-sqlite3 runs the batch as a savepoint: a batch that throws still
    // rolls back alone, and the group goes on.
    return this.#tx(fn) as T;
  }

  sync(): Promise<void> {
    if (this.#failed !== undefined) return Promise.reject(this.#failed);
    if (!this.#grouped) return Promise.resolve();
    return new Promise((resolve, reject) => this.#syncWaiters.push({ resolve, reject }));
  }

  flush(): void {
    this.commitGroup();
    if (this.#failed !== undefined) throw this.#failed;
  }

  /**
   * Commits the open group. If the commit fails, the group's changes are rolled back and the
   * store refuses every later write: continuing would let a later commit move the checkpoint
   * past events whose intents were in the lost group. The bot stops; the next start replays
   * from the last committed checkpoint.
   */
  commitGroup(): void {
    if (!this.#grouped) return;
    const waiters = this.#syncWaiters;
    this.#syncWaiters = [];
    try {
      if (this.#unsettled) this.#settle();
      this.#db.exec('COMMIT');
    } catch (err) {
      if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
      this.#failed = new StoreError(
        'STORE_COMMIT_FAILED',
        `the journal could not commit its last changes (${(err as Error).message}); they were rolled back and the store refuses further writes`,
        { cause: err },
      );
    } finally {
      this.#grouped = false;
      this.#unsettled = false;
    }
    for (const w of waiters) {
      if (this.#failed === undefined) w.resolve();
      else w.reject(this.#failed);
    }
  }
}

function isThenable(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
