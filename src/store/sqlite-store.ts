import type BetterSqlite3 from 'better-sqlite3';
import type { Clock } from '../core/clock.js';
import { DEFAULTS } from '../core/defaults.js';
import { attemptsOf } from './attempt-log.js';
import { JournalBatches, type CommitScheduler } from './journal-batches.js';
import {
  assertOffset,
  changeEntry,
  purgeEntry,
  recordEntries,
  requeueEntry,
} from './journal-changes.js';
import { JournalCheckpoint } from './journal-checkpoint.js';
import type { JournalEntry } from './journal-entry.js';
import { FOLD_AFTER_LOG_ROWS, JournalFile } from './journal-file.js';
import { JournalMemory } from './journal-memory.js';
import { byJustifyingOffset, countByState, listDeadLetters, listIntents } from './journal-reads.js';
import { JournalSlots } from './journal-slots.js';
import type { JournalContents, JournalTransfer } from './journal-transfer.js';
import { readSqliteJournal, writeSqliteJournal } from './sqlite-journal-transfer.js';
import { toDeadLetter, toIntent } from './sqlite-rows.js';
import {
  prepareLogStatements,
  prepareStatements,
  schemaParts,
  type SchemaParts,
  type SqliteStatements,
} from './sqlite-statements.js';
import {
  type AttemptRecord,
  type DeadLetter,
  type IntentChange,
  type IntentQuery,
  type IntentRecord,
  type IntentState,
  type NewIntent,
  type RecordIntentsResult,
  type SlotRecord,
  type Store,
} from './store.js';
import { StoreError } from './store-error.js';

type Db = BetterSqlite3.Database;

export type SqliteStoreInit = {
  /** An open database, migrated (or, for tests of migrations, of an older schema). */
  readonly db: Db;
  readonly clock: Clock;
  /** The file, for error messages. */
  readonly path: string;
  /** Group commit (see `openSqliteStore`); undefined: every outermost batch commits. */
  readonly scheduleCommit?: CommitScheduler;
  /** Read the file, write nothing: every write throws STORE_READ_ONLY. */
  readonly readonly?: boolean;
  /** @default FOLD_AFTER_LOG_ROWS */
  readonly foldAfterLogRows?: number;
  /** Runs once the database is closed (the writer's lock goes). */
  readonly onClose?: () => void;
};

/**
 * The SQLite Store. Memory is the truth between commits: every open intent, and every intent
 * changed since the last fold, is an entry in memory; a batch changes only memory (with an undo
 * for each change, so a batch that throws leaves nothing behind), and a commit writes one
 * `intent_log` row per intent changed since the previous commit, plus the checkpoint and slots.
 * An intent recorded and submitted in one turn costs one row. The log is folded into `intents`
 * (the compact form the older schemas had, and what operator tools read) when it grows past
 * `FOLD_AFTER_LOG_ROWS`, at compaction, at open and at close.
 *
 * The checkpoint, the slots and the file's side (load, write, fold) are parts of their own;
 * this class is the `Store` contract over them: argument checks, batches, the merged reads.
 *
 * Made by `openSqliteStore`, or `SqliteStore.open` on a database already open.
 */
export class SqliteStore implements Store, JournalTransfer {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #path: string;
  readonly #readonly: boolean;
  readonly #onClose: (() => void) | undefined;
  readonly #s: SqliteStatements;
  readonly #parts: SchemaParts;
  readonly #batches: JournalBatches;
  #closed = false;

  readonly #mem: JournalMemory;
  readonly #checkpoint: JournalCheckpoint;
  readonly #slots: JournalSlots;
  readonly #file: JournalFile;
  /** A read-only store reloads when another connection has committed since it last looked. */
  #seenVersion: number | undefined;

  /** Opens the store on `init.db`: loads the journal, and folds the log (unless read-only). */
  static open(init: SqliteStoreInit): SqliteStore {
    const store = new SqliteStore(init);
    if (init.readonly !== true) {
      store.#file.load();
      if (store.#mem.logRows > 0) store.#file.write(true);
    }
    return store;
  }

  private constructor(init: SqliteStoreInit) {
    this.#db = init.db;
    this.#clock = init.clock;
    this.#path = init.path;
    this.#readonly = init.readonly === true;
    this.#onClose = init.onClose;
    const parts = schemaParts(init.db);
    this.#parts = parts;
    this.#s = prepareStatements(init.db, parts);
    this.#batches = new JournalBatches(
      { settle: () => this.#checkpoint.settle(), write: () => this.#file.write(false) },
      init.scheduleCommit,
    );
    const onUndo = (undo: () => void): void => this.#batches.onUndo(undo);
    this.#mem = new JournalMemory(onUndo);
    this.#checkpoint = new JournalCheckpoint(this.#mem, onUndo);
    this.#slots = new JournalSlots(onUndo);
    this.#file = new JournalFile({
      db: init.db,
      path: init.path,
      parts,
      statements: this.#s,
      log: parts.log && !this.#readonly ? prepareLogStatements(init.db, parts) : undefined,
      foldAfterLogRows: init.foldAfterLogRows ?? FOLD_AFTER_LOG_ROWS,
      mem: this.#mem,
      slots: this.#slots,
      checkpoint: this.#checkpoint,
    });
  }

  batch<T>(fn: () => T): T {
    this.#assertOpen();
    if (this.#readonly) {
      throw new StoreError(
        'STORE_READ_ONLY',
        `the state store ${this.#path} is open read-only: it cannot be changed`,
      );
    }
    return this.#batches.batch(fn);
  }

  sync(): Promise<void> {
    return this.#batches.sync();
  }

  flush(): void {
    this.#batches.flush();
  }

  // ---- checkpoint ----

  checkpoint(): number | undefined {
    return this.#read(() => {
      if (this.#batches.unsettledGroup) this.batch(() => this.#checkpoint.settle());
      return this.#checkpoint.resume ?? undefined;
    });
  }

  advanceCheckpoint(processedOffset: number): void {
    assertOffset(processedOffset, 'processedOffset');
    this.batch(() => {
      this.#checkpoint.advance(processedOffset);
      // Recomputed when the outermost batch ends, after every intent of the batch is recorded.
      this.#batches.markUnsettled();
    });
  }

  resetCheckpoint(offset: number): void {
    assertOffset(offset, 'offset');
    this.batch(() => this.#checkpoint.reset(offset));
  }

  // ---- intents ----

  recordIntents(intents: readonly NewIntent[]): RecordIntentsResult {
    return this.batch(() => {
      const mem = this.#mem;
      const folded = this.#file.foldedOf(intents);
      const known = (id: string): JournalEntry | undefined => mem.get(id) ?? folded.get(id);
      const result = recordEntries(mem, intents, this.#clock.now(), known);
      if (result.inserted.length > 0) this.#batches.markUnsettled();
      return result;
    });
  }

  transition(commandId: string, change: IntentChange): IntentRecord {
    return this.batch(() => {
      const now = this.#clock.now();
      const record = changeEntry(this.#mem, this.#file.known(commandId), commandId, change, now);
      this.#batches.markUnsettled();
      return record;
    });
  }

  getAttempts(commandId: string): AttemptRecord[] | undefined {
    return this.#read(() => {
      const entry = this.#mem.get(commandId);
      if (entry !== undefined) return entry.deleted ? undefined : attemptsOf(entry.row.attempt_log);
      const row = this.#s.getIntent.get(commandId);
      return row === undefined ? undefined : attemptsOf(row.attempt_log);
    });
  }

  getRecordedEvent(commandId: string): unknown {
    return this.#read(() => {
      const entry = this.#mem.get(commandId);
      const text =
        entry !== undefined
          ? entry.deleted
            ? null
            : entry.row.event
          : (this.#s.getIntent.get(commandId)?.event ?? null);
      return text === null ? undefined : (JSON.parse(text) as unknown);
    });
  }

  getIntent(commandId: string): IntentRecord | undefined {
    return this.#read(() => {
      const entry = this.#mem.get(commandId);
      if (entry !== undefined) return entry.deleted ? undefined : entry.record;
      const row = this.#s.getIntent.get(commandId);
      return row === undefined ? undefined : toIntent(row);
    });
  }

  hasEventIntent(ruleId: string, offset: number, nodeId: number): boolean {
    return this.#read(() => {
      if (this.#mem.hasEvent(ruleId, offset, nodeId)) return true;
      return this.#s.eventIntents
        .all(offset, nodeId, ruleId)
        .some((r) => this.#mem.get(r.command_id)?.deleted !== true);
    });
  }

  hasEventIntentAsync(ruleId: string, offset: number, nodeId: number): Promise<boolean> {
    return new Promise((resolve) => resolve(this.hasEventIntent(ruleId, offset, nodeId)));
  }

  openIntents(options: { readonly limit?: number } = {}): IntentRecord[] {
    return this.#read(() => {
      const open = this.#mem.openRecords().sort(byJustifyingOffset);
      const limit = options.limit ?? -1;
      return limit < 0 ? open : open.slice(0, limit);
    });
  }

  listIntents(query: IntentQuery = {}): IntentRecord[] {
    return this.#read(() =>
      listIntents(this.#mem, this.#db, query, query.limit ?? DEFAULTS.store.listLimit),
    );
  }

  countByState(): Record<IntentState, number> {
    return this.#read(() => countByState(this.#mem, this.#s.countByState.all()));
  }

  // ---- dead letters ----

  listDeadLetters(
    options: { readonly limit?: number; readonly ruleId?: string } = {},
  ): DeadLetter[] {
    return this.#read(() =>
      listDeadLetters(
        this.#mem,
        (limit) => this.#s.listDeadLetters.all({ rule_id: options.ruleId ?? null, limit }),
        options.ruleId,
        options.limit ?? DEFAULTS.store.listLimit,
      ),
    );
  }

  getDeadLetter(commandId: string): DeadLetter | undefined {
    return this.#read(() => {
      const entry = this.#mem.get(commandId);
      if (entry !== undefined) return entry.deleted ? undefined : entry.deadLetter?.value;
      const row = this.#s.getDeadLetter.get(commandId);
      return row === undefined ? undefined : toDeadLetter(row);
    });
  }

  requeueDeadLetter(commandId: string, options: { readonly deadline?: number } = {}): IntentRecord {
    return this.batch(() => {
      const current = this.#file.known(commandId);
      const now = this.#clock.now();
      const record = requeueEntry(this.#mem, current, commandId, now, options.deadline);
      this.#batches.markUnsettled();
      return record;
    });
  }

  purgeDeadLetter(commandId: string): boolean {
    return this.batch(() => purgeEntry(this.#mem, this.#file.known(commandId), commandId));
  }

  // ---- slots ----

  getSlotRecord(ruleId: string): SlotRecord | undefined {
    return this.#read(() => this.#slots.get(ruleId));
  }

  listSlotRecords(): SlotRecord[] {
    return this.#read(() => this.#slots.list());
  }

  beginSlot(ruleId: string, slot: number, snapshotOffset?: number): SlotRecord {
    return this.batch(() => this.#slots.begin(ruleId, slot, this.#clock.now(), snapshotOffset));
  }

  completeSlot(ruleId: string, slot: number): SlotRecord {
    return this.batch(() => this.#slots.complete(ruleId, slot));
  }

  // ---- transfer (`ledgerbot state export|import`) ----

  exportJournal(): Promise<JournalContents> {
    return new Promise((resolve) =>
      resolve(
        this.#read(() =>
          readSqliteJournal(this.#db, this.#mem, this.#checkpoint, this.#slots.list()),
        ),
      ),
    );
  }

  importJournal(journal: JournalContents): Promise<void> {
    return new Promise((resolve) => {
      this.batch(() => undefined); // refuses a closed or read-only store
      this.flush(); // so the tables show all memory holds
      writeSqliteJournal(this.#db, this.#s, this.#parts, this.#path, journal);
      this.#file.load();
      resolve();
    });
  }

  // ---- housekeeping ----

  compact(olderThanMs: number): number {
    this.#assertOpen();
    if (this.#readonly) return this.batch(() => 0);
    // Inside a batch memory is ahead of the file: compact the folded rows only, up to the
    // checkpoint as committed (a finished intent never changes, so none of them is shadowed).
    if (!this.#batches.unwritten) {
      this.#batches.flush();
      this.#file.write(true);
    }
    const cutoff = this.#clock.now() - olderThanMs;
    return this.#s.compact.run({ cutoff, resume: this.#checkpoint.writtenResume ?? -1 }).changes;
  }

  close(): void {
    if (this.#closed) return;
    try {
      if (!this.#readonly) {
        this.#batches.commitGroup();
        if (!this.#batches.failed && !this.#batches.unwritten) this.#file.write(true);
      }
    } finally {
      this.#closed = true;
      this.#db.close();
      this.#onClose?.();
    }
  }

  /**
   * Runs a read. A read-only store reads another process's file: it reloads the journal when
   * that process has committed since, and reads the folded rows in the same snapshot.
   */
  #read<T>(fn: () => T): T {
    this.#assertOpen();
    if (!this.#readonly) return fn();
    // Read before the snapshot: a commit in between only means one more reload later.
    const version = this.#db.pragma('data_version', { simple: true }) as number;
    return this.#db.transaction(() => {
      if (version !== this.#seenVersion) {
        this.#file.load();
        this.#seenVersion = version;
      }
      return fn();
    })();
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreError('STORE_CLOSED', 'the store is closed');
  }
}
