import { StoreError } from './store-error.js';

/** Runs `commit` later, once: at the end of the event-loop turn, or after a window. */
export type CommitScheduler = (commit: () => void) => void;

/** What the batches need from the store. */
export type JournalBatchHooks = {
  /** Recomputes the checkpoint: once before the changes that moved it are written. */
  readonly settle: () => void;
  /**
   * Writes every change made since the last write in one transaction; throws if it failed. A
   * remote store's write returns the commit's promise instead: it takes what it writes from
   * memory at once (so the next batches start a new group) and commits it later, one commit in
   * flight at a time, in order; a rejection fails that group and every later one.
   */
  readonly write: () => void | Promise<void>;
};

type SyncWaiter = { resolve: () => void; reject: (err: unknown) => void };

/** A group whose write is a promise not settled yet: its undo and its waiters. */
type InFlightGroup = { readonly undo: (() => void)[]; readonly waiters: SyncWaiter[] };

/**
 * `Store.batch`, `sync` and `flush` of the SQLite store, with or without group commit. The store
 * changes only its memory during a batch, and registers how to take each change back
 * (`onUndo`); a batch that throws is undone, down to where it began, as a savepoint would be, and
 * a write that fails undoes everything it was to write. SQL is written once the outermost batch
 * ends (without group commit) or when the group commits (with it).
 */
export class JournalBatches {
  readonly #hooks: JournalBatchHooks;
  /** Set: batches join one group, written when this callback runs it. */
  readonly #scheduleCommit: CommitScheduler | undefined;
  #depth = 0;
  #unsettled = false;
  /** A group is open (only with `#scheduleCommit`). */
  #grouped = false;
  /** How to take back each change not written yet, oldest first. */
  #undo: (() => void)[] = [];
  /** Waiting for the open group to commit (see `sync`). */
  #syncWaiters: SyncWaiter[] = [];
  /** Groups written by a promise not settled yet, oldest first. */
  readonly #inFlight: InFlightGroup[] = [];
  /** A group commit failed: every later write is refused (see `commitGroup`). */
  #failed: StoreError | undefined;

  constructor(hooks: JournalBatchHooks, scheduleCommit: CommitScheduler | undefined) {
    this.#hooks = hooks;
    this.#scheduleCommit = scheduleCommit;
  }

  /** Something the checkpoint depends on changed in the running batch. */
  markUnsettled(): void {
    this.#unsettled = true;
  }

  /** An open group holds changes the checkpoint has not been recomputed for. */
  get unsettledGroup(): boolean {
    return this.#grouped && this.#unsettled;
  }

  /** A group commit failed (see `commitGroup`). */
  get failed(): boolean {
    return this.#failed !== undefined;
  }

  /** Inside a batch, or a group not written yet: memory is ahead of the file. */
  get unwritten(): boolean {
    return this.#depth > 0 || this.#grouped;
  }

  /** Registers how to take back a change just made; outside a batch there is nothing to undo. */
  onUndo(undo: () => void): void {
    if (this.#depth > 0 || this.#grouped) this.#undo.push(undo);
  }

  batch<T>(fn: () => T): T {
    if (this.#failed !== undefined) throw this.#failed;
    if (this.#scheduleCommit !== undefined && !this.#grouped && this.#depth === 0) {
      this.#grouped = true;
      this.#scheduleCommit(() => this.commitGroup());
    }
    const mark = this.#undo.length;
    this.#depth++;
    try {
      const result = fn();
      if (isThenable(result)) {
        throw new StoreError(
          'STORE_ASYNC_BATCH',
          'store.batch(fn) got a promise: the batch must be synchronous, so await before or after it',
        );
      }
      // In a group the checkpoint is recomputed and written once, when the group commits.
      if (this.#depth === 1 && !this.#grouped) {
        if (this.#unsettled) this.#hooks.settle();
        // Only a local store runs without groups, and its write is synchronous.
        void this.#hooks.write();
      }
      return result;
    } catch (err) {
      this.#rollback(mark);
      throw err;
    } finally {
      this.#depth--;
      if (this.#depth === 0 && !this.#grouped) {
        this.#unsettled = false;
        this.#undo = [];
      }
    }
  }

  sync(): Promise<void> {
    if (this.#failed !== undefined) return Promise.reject(this.#failed);
    const waiters = this.#grouped ? this.#syncWaiters : this.#inFlight.at(-1)?.waiters;
    if (waiters === undefined) return Promise.resolve();
    return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
  }

  /** Every group written so far has committed (or one failed). */
  get idle(): boolean {
    return !this.#grouped && this.#inFlight.length === 0;
  }

  flush(): void {
    this.commitGroup();
    if (this.#failed !== undefined) throw this.#failed;
  }

  /**
   * Writes the open group. If that fails, the group's changes are undone in memory (the file
   * never had them) and the store refuses every later write: continuing would let a later
   * commit move the checkpoint past events whose intents were in the lost group. The bot
   * stops; the next start replays from the last committed checkpoint.
   */
  commitGroup(): void {
    if (!this.#grouped || this.#depth > 0) return;
    const waiters = this.#syncWaiters;
    this.#syncWaiters = [];
    try {
      if (this.#failed !== undefined) {
        // An earlier group's remote commit failed: this one is never written.
        this.#rollback(0);
      } else {
        if (this.#unsettled) this.#hooks.settle();
        const written = this.#hooks.write();
        if (written !== undefined) {
          const group: InFlightGroup = { undo: this.#undo, waiters };
          this.#inFlight.push(group);
          written.then(
            () => this.#committed(group),
            (err: unknown) => this.#commitFailed(group, err),
          );
          return;
        }
      }
    } catch (err) {
      this.#rollback(0);
      this.#failed = commitFailed(err);
    } finally {
      this.#grouped = false;
      this.#unsettled = false;
      this.#undo = [];
    }
    for (const w of waiters) {
      if (this.#failed === undefined) w.resolve();
      else w.reject(this.#failed);
    }
  }

  #rollback(mark: number): void {
    const undo = this.#undo;
    while (undo.length > mark) undo.pop()!();
  }

  #committed(group: InFlightGroup): void {
    if (this.#inFlight[0] === group) this.#inFlight.shift();
    for (const w of group.waiters) {
      if (this.#failed === undefined) w.resolve();
      else w.reject(this.#failed);
    }
  }

  /**
   * A remote commit failed: memory goes back to what was committed before it (the open group's
   * changes, then each group in flight from the newest down to this one, are undone), and the
   * store refuses every later write, as after a failed local commit.
   */
  #commitFailed(group: InFlightGroup, err: unknown): void {
    const index = this.#inFlight.indexOf(group);
    if (this.#failed === undefined) {
      this.#failed = commitFailed(err);
      if (this.#depth === 0) this.#rollback(0);
      for (let i = this.#inFlight.length - 1; i >= Math.max(index, 0); i--) {
        const undo = this.#inFlight[i]!.undo;
        while (undo.length > 0) undo.pop()!();
      }
    }
    const failed = this.#inFlight.splice(Math.max(index, 0));
    for (const g of failed) for (const w of g.waiters) w.reject(this.#failed);
  }
}

function commitFailed(err: unknown): StoreError {
  return new StoreError(
    'STORE_COMMIT_FAILED',
    `the journal could not commit its last changes (${(err as Error).message}); they were rolled back and the store refuses further writes`,
    { cause: err },
  );
}

function isThenable(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
