import type BetterSqlite3 from 'better-sqlite3';
import type { Clock } from '../core/clock.js';
import { DEFAULTS } from '../core/defaults.js';
import type { CommitScheduler } from './journal-batches.js';
import type { KnownEntry } from './journal-changes.js';
import type { JournalEntry } from './journal-entry.js';
import { FOLD_AFTER_LOG_ROWS, JournalFile } from './journal-file.js';
import { listIntents } from './journal-reads.js';
import { JournalStore, type FoldedRows } from './journal-store.js';
import type { JournalContents, JournalTransfer } from './journal-transfer.js';
import { readSqliteJournal, writeSqliteJournal } from './sqlite-journal-transfer.js';
import {
  prepareLogStatements,
  prepareStatements,
  schemaParts,
  type SchemaParts,
  type SqliteStatements,
} from './sqlite-statements.js';
import type { IntentQuery, IntentRecord, NewIntent, Store } from './store.js';
import { StoreError } from './store-error.js';
import type { WalCheckpointer } from './wal-checkpointer.js';

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
  /** Checkpoints on a thread of its own; undefined: SQLite's, inside the commits. */
  readonly checkpointer?: WalCheckpointer;
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
 * The journal in memory, its batches and most of the `Store` contract are JournalStore's, shared
 * with the PostgreSQL store; the file's side (load, write, fold) is JournalFile; this class adds
 * the folded rows under memory (lookups, the merged reads), read-only use and housekeeping.
 *
 * Made by `openSqliteStore`, or `SqliteStore.open` on a database already open.
 */
export class SqliteStore extends JournalStore implements Store, JournalTransfer {
  readonly #db: Db;
  readonly #path: string;
  readonly #readonly: boolean;
  readonly #onClose: (() => void) | undefined;
  readonly #checkpointer: WalCheckpointer | undefined;
  readonly #s: SqliteStatements;
  readonly #parts: SchemaParts;
  readonly #file: JournalFile;
  /** A read-only store reloads when another connection has committed since it last looked. */
  #seenVersion: number | undefined;

  /** Opens the store on `init.db`: loads the journal, and folds the log (unless read-only). */
  static open(init: SqliteStoreInit): SqliteStore {
    const store = new SqliteStore(init);
    if (init.readonly !== true) {
      store.#file.load();
      if (store.mem.logRows > 0) store.#file.write(true);
    }
    return store;
  }

  private constructor(init: SqliteStoreInit) {
    const parts = schemaParts(init.db);
    const statements = prepareStatements(init.db, parts);
    super({
      clock: init.clock,
      scheduleCommit: init.scheduleCommit,
      folded: foldedRowsOf(statements),
    });
    this.#db = init.db;
    this.#path = init.path;
    this.#readonly = init.readonly === true;
    this.#onClose = init.onClose;
    this.#checkpointer = init.checkpointer;
    this.#parts = parts;
    this.#s = statements;
    this.#file = new JournalFile({
      db: init.db,
      path: init.path,
      parts,
      statements: this.#s,
      log: parts.log && !this.#readonly ? prepareLogStatements(init.db, parts) : undefined,
      foldAfterLogRows: init.foldAfterLogRows ?? FOLD_AFTER_LOG_ROWS,
      mem: this.mem,
      slots: this.slots,
      checkpoint: this.journalCheckpoint,
    });
  }

  protected writeGroup(): void {
    this.#file.write(false);
    this.#checkpointer?.afterCommit();
  }

  protected override assertWritable(): void {
    if (this.#readonly) {
      throw new StoreError(
        'STORE_READ_ONLY',
        `the state store ${this.#path} is open read-only: it cannot be changed`,
      );
    }
  }

  protected override known(commandId: string): JournalEntry | undefined {
    return this.#file.known(commandId);
  }

  protected override knownOf(intents: readonly NewIntent[]): KnownEntry {
    const folded = this.#file.foldedOf(intents);
    return (id) => this.mem.get(id) ?? folded.get(id);
  }

  hasEventIntent(ruleId: string, offset: number, nodeId: number): boolean {
    return this.read(() => {
      if (this.mem.hasEvent(ruleId, offset, nodeId)) return true;
      return this.#s.eventIntents
        .all(offset, nodeId, ruleId)
        .some((r) => this.mem.get(r.command_id)?.deleted !== true);
    });
  }

  hasEventIntentAsync(ruleId: string, offset: number, nodeId: number): Promise<boolean> {
    return new Promise((resolve) => resolve(this.hasEventIntent(ruleId, offset, nodeId)));
  }

  listIntents(query: IntentQuery = {}): IntentRecord[] {
    return this.read(() =>
      listIntents(this.mem, this.#db, query, query.limit ?? DEFAULTS.store.listLimit),
    );
  }

  // ---- transfer (`ledgerbot state export|import`) ----

  exportJournal(): Promise<JournalContents> {
    return new Promise((resolve) =>
      resolve(
        this.read(() =>
          readSqliteJournal(this.#db, this.mem, this.journalCheckpoint, this.slots.list()),
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
    this.assertOpen();
    if (this.#readonly) return this.batch(() => 0);
    // Inside a batch memory is ahead of the file: compact the folded rows only, up to the
    // checkpoint as committed (a finished intent never changes, so none of them is shadowed).
    if (!this.batches.unwritten) {
      this.batches.flush();
      this.#file.write(true);
    }
    const cutoff = this.clock.now() - olderThanMs;
    const resume = this.journalCheckpoint.writtenResume ?? -1;
    return this.#s.compact.run({ cutoff, resume }).changes;
  }

  close(): void {
    if (this.closed) return;
    try {
      if (!this.#readonly) {
        this.batches.commitGroup();
        if (!this.batches.failed && !this.batches.unwritten) this.#file.write(true);
      }
    } finally {
      this.closed = true;
      // Its connection first: the writer's close, the last one, checkpoints and removes the WAL.
      this.#checkpointer?.close();
      this.#db.close();
      this.#onClose?.();
    }
  }

  /**
   * Runs a read. A read-only store reads another process's file: it reloads the journal when
   * that process has committed since, and reads the folded rows in the same snapshot.
   */
  protected override read<T>(fn: () => T): T {
    this.assertOpen();
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
}

/** The folded rows under memory (see JournalStore). */
function foldedRowsOf(s: SqliteStatements): FoldedRows {
  return {
    intent: (commandId) => s.getIntent.get(commandId),
    deadLetter: (commandId) => s.getDeadLetter.get(commandId),
    deadLetters: (ruleId, limit) => s.listDeadLetters.all({ rule_id: ruleId ?? null, limit }),
    counts: () => s.countByState.all(),
  };
}
