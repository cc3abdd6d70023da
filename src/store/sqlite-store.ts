import type BetterSqlite3 from 'better-sqlite3';
import type { Clock } from '../core/clock.js';
import { DEFAULTS } from '../core/defaults.js';
import { IllegalStateError } from '../core/illegal-state-error.js';
import { intentValues, logValues, replayLogRow } from './intent-log.js';
import { JournalBatches, type CommitScheduler } from './journal-batches.js';
import {
  changedEntry,
  entryOfRow,
  newEntry,
  purgedEntry,
  requeuedEntry,
  type JournalEntry,
} from './journal-entry.js';
import { JournalMemory } from './journal-memory.js';
import { byJustifyingOffset, countByState, listDeadLetters, listIntents } from './journal-reads.js';
import { JournalSlots } from './journal-slots.js';
import { toDeadLetter, toIntent, toSlot } from './sqlite-rows.js';
import {
  prepareLogStatements,
  prepareStatements,
  readLog,
  schemaParts,
  type LogStatements,
  type SchemaParts,
  type SqliteStatements,
} from './sqlite-statements.js';
import {
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

/**
 * Log rows after which a write folds the log into `intents` instead of appending to it. It bounds
 * the memory the journal keeps for finished intents (each changed intent stays in memory until
 * the next fold) and the replay at open; a fold costs about one upsert per intent it folds.
 */
export const FOLD_AFTER_LOG_ROWS = 2_000;

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
 * Made by `openSqliteStore`, or `SqliteStore.open` on a database already open.
 */
export class SqliteStore implements Store {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #path: string;
  readonly #readonly: boolean;
  readonly #foldAfter: number;
  readonly #onClose: (() => void) | undefined;
  readonly #parts: SchemaParts;
  readonly #s: SqliteStatements;
  readonly #log: LogStatements | undefined;
  readonly #batches: JournalBatches;
  #closed = false;

  readonly #mem: JournalMemory;
  #resume: number | null = null;
  #processed: number | null = null;
  #writtenResume: number | null = null;
  #writtenProcessed: number | null = null;
  /** The highest offset of an event (or contract) intent in `intents`, or -1: see `#foldedOf`. */
  #maxFoldedEventOffset = -1;
  readonly #slots: JournalSlots;
  /** A read-only store reloads when another connection has committed since it last looked. */
  #seenVersion: number | undefined;

  /** Opens the store on `init.db`: loads the journal, and folds the log (unless read-only). */
  static open(init: SqliteStoreInit): SqliteStore {
    const store = new SqliteStore(init);
    if (init.readonly !== true) {
      store.#load();
      if (store.#mem.logRows > 0) store.#write(true);
    }
    return store;
  }

  private constructor(init: SqliteStoreInit) {
    this.#db = init.db;
    this.#clock = init.clock;
    this.#path = init.path;
    this.#readonly = init.readonly === true;
    this.#foldAfter = init.foldAfterLogRows ?? FOLD_AFTER_LOG_ROWS;
    this.#onClose = init.onClose;
    this.#parts = schemaParts(init.db);
    this.#s = prepareStatements(init.db, this.#parts);
    this.#log = this.#parts.log && !this.#readonly ? prepareLogStatements(init.db) : undefined;
    this.#batches = new JournalBatches(
      { settle: () => this.#settle(), write: () => this.#write(false) },
      init.scheduleCommit,
    );
    this.#mem = new JournalMemory((undo) => this.#batches.onUndo(undo));
    this.#slots = new JournalSlots((undo) => this.#batches.onUndo(undo));
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
      if (this.#batches.unsettledGroup) this.batch(() => this.#settle());
      return this.#resume ?? undefined;
    });
  }

  advanceCheckpoint(processedOffset: number): void {
    assertOffset(processedOffset, 'processedOffset');
    this.batch(() => {
      this.#setCheckpoint(
        this.#resume,
        Math.max(this.#processed ?? processedOffset, processedOffset),
      );
      // Recomputed when the outermost batch ends, after every intent of the batch is recorded.
      this.#batches.markUnsettled();
    });
  }

  resetCheckpoint(offset: number): void {
    assertOffset(offset, 'offset');
    this.batch(() => this.#setCheckpoint(offset, offset));
  }

  #settle(): void {
    if (this.#processed === null) return;
    // Open intents at or below the checkpoint (requeued, or jumped over by a reset) are resumed
    // from the journal, not by a replay, so they do not hold the checkpoint.
    const resume = this.#resume;
    const lowestOpen = this.#mem.lowestOpenAbove(resume ?? -1);
    let candidate = this.#processed;
    if (lowestOpen !== undefined) candidate = Math.min(candidate, lowestOpen - 1);
    const next = resume === null ? candidate : Math.max(resume, candidate);
    if (next !== resume && next >= 0) this.#setCheckpoint(next, this.#processed);
  }

  #setCheckpoint(resume: number | null, processed: number | null): void {
    const before = { resume: this.#resume, processed: this.#processed };
    this.#resume = resume;
    this.#processed = processed;
    // The offsets below the old checkpoint were dropped: a lower one needs them back.
    if (before.resume !== null && (resume === null || resume < before.resume)) {
      this.#mem.rebuildOffsets();
    }
    this.#batches.onUndo(() => {
      this.#resume = before.resume;
      this.#processed = before.processed;
      if (resume !== null && (before.resume === null || before.resume < resume)) {
        this.#mem.rebuildOffsets();
      }
    });
  }

  // ---- intents ----

  recordIntents(intents: readonly NewIntent[]): RecordIntentsResult {
    return this.batch(() => {
      const now = this.#clock.now();
      const inserted: IntentRecord[] = [];
      const existing: IntentRecord[] = [];
      const folded = this.#foldedOf(intents);
      for (const intent of intents) {
        assertOffset(intent.offset, `offset of ${intent.commandId}`);
        const known = this.#mem.get(intent.commandId) ?? folded.get(intent.commandId);
        if (known !== undefined && !known.deleted) {
          existing.push(known.record);
          continue;
        }
        const entry = newEntry(intent, now, known);
        this.#mem.put(intent.commandId, entry);
        inserted.push(entry.record);
        this.#batches.markUnsettled();
      }
      return { inserted, existing };
    });
  }

  transition(commandId: string, change: IntentChange): IntentRecord {
    return this.batch(() => {
      const current = this.#known(commandId);
      if (current === undefined || current.deleted) throw unknownIntent(commandId);
      const next = changedEntry(current, change, this.#clock.now());
      this.#mem.put(commandId, next);
      this.#batches.markUnsettled();
      return next.record;
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
      const current = this.#known(commandId);
      if (current === undefined || current.deleted) throw unknownIntent(commandId);
      if (current.row.state !== 'dead-lettered') {
        throw new IllegalStateError(
          `intent ${commandId} is ${current.row.state}, not dead-lettered: only dead letters can be requeued`,
        );
      }
      const next = requeuedEntry(current, this.#clock.now(), options.deadline);
      this.#mem.put(commandId, next);
      this.#batches.markUnsettled();
      return next.record;
    });
  }

  purgeDeadLetter(commandId: string): boolean {
    return this.batch(() => {
      const current = this.#known(commandId);
      if (current === undefined || current.deleted || current.row.state !== 'dead-lettered') {
        return false;
      }
      this.#mem.put(commandId, purgedEntry(current));
      return true;
    });
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

  // ---- housekeeping ----

  compact(olderThanMs: number): number {
    this.#assertOpen();
    if (this.#readonly) return this.batch(() => 0);
    // Inside a batch memory is ahead of the file: compact the folded rows only, up to the
    // checkpoint as committed (a finished intent never changes, so none of them is shadowed).
    if (!this.#batches.unwritten) {
      this.#batches.flush();
      this.#write(true);
    }
    const cutoff = this.#clock.now() - olderThanMs;
    return this.#s.compact.run({ cutoff, resume: this.#writtenResume ?? -1 }).changes;
  }

  close(): void {
    if (this.#closed) return;
    try {
      if (!this.#readonly) {
        this.#batches.commitGroup();
        if (!this.#batches.failed && !this.#batches.unwritten) this.#write(true);
      }
    } finally {
      this.#closed = true;
      this.#db.close();
      this.#onClose?.();
    }
  }

  // ---- memory ----

  /** The entry of an intent: from memory, or read from the folded form (not kept). */
  #known(commandId: string): JournalEntry | undefined {
    const entry = this.#mem.get(commandId);
    if (entry !== undefined) return entry;
    const row = this.#s.getIntent.get(commandId);
    if (row === undefined) return undefined;
    const dead = row.state === 'dead-lettered' ? this.#s.getDeadLetter.get(commandId) : undefined;
    return entryOfRow(row, row.state, dead);
  }

  /**
   * The folded entries of the intents memory does not have. An intent of a ledger event above
   * every folded event offset cannot be folded (an event's offset is part of what it is, and its
   * commandId is made from it): the live stream's intents skip the lookup.
   */
  #foldedOf(intents: readonly NewIntent[]): Map<string, JournalEntry> {
    const found = new Map<string, JournalEntry>();
    for (const intent of intents) {
      if (this.#mem.has(intent.commandId)) continue;
      if (intent.trigger.kind === 'event' && intent.offset > this.#maxFoldedEventOffset) continue;
      const entry = this.#known(intent.commandId);
      if (entry !== undefined) found.set(intent.commandId, entry);
    }
    return found;
  }

  /**
   * Writes what changed since the last write, in one transaction: a log row per changed intent
   * (its facts only in its first row), or, with `fold` or once the log is long enough, the
   * whole log folded into `intents` and `dead_letters`. Memory changes only once it committed.
   */
  #write(fold: boolean): void {
    const checkpointChanged =
      this.#resume !== this.#writtenResume || this.#processed !== this.#writtenProcessed;
    const slots = this.#slots.changed();
    if (!fold && this.#mem.changed === 0 && slots.length === 0 && !checkpointChanged) {
      return;
    }
    const log = this.#log;
    const folding =
      fold || log === undefined || this.#mem.logRows + this.#mem.changed > this.#foldAfter;
    this.#db.transaction(() => {
      if (folding) this.#foldRows();
      else {
        for (const entry of this.#mem.changedEntries()) {
          log.append.run(...logValues(entry, entry.factsPending));
        }
      }
      for (const s of slots) {
        this.#s.upsertSlot.run(
          s.ruleId,
          s.lastCompletedSlot ?? null,
          s.inProgressSlot ?? null,
          s.inProgressSince ?? null,
          s.snapshotOffset ?? null,
        );
      }
      if (checkpointChanged) this.#s.setCheckpoint.run(this.#resume, this.#processed);
    })();
    this.#writtenResume = this.#resume;
    this.#writtenProcessed = this.#processed;
    if (folding) this.#mem.folded((e) => this.#asFolded(e));
    else this.#mem.logged();
    this.#slots.written();
  }

  #foldRows(): void {
    const s = this.#s;
    for (const e of this.#mem.unfoldedEntries()) {
      const id = e.row.command_id;
      if (e.deleted) {
        s.deleteDeadLetter.run(id);
        s.deleteIntent.run(id);
        continue;
      }
      s.upsertIntent.run(...intentValues(e, this.#parts.inDoubt));
      if (e.row.trigger_kind === 'event' && e.row.justifying_offset > this.#maxFoldedEventOffset) {
        this.#maxFoldedEventOffset = e.row.justifying_offset;
      }
      const dead = e.deadLetter;
      if (dead !== undefined) s.upsertDeadLetter.run(id, dead.errorText, dead.eventText, dead.at);
      else if (e.baseDeadLetter) s.deleteDeadLetter.run(id);
    }
    if (this.#mem.logRows > 0) this.#log?.clear.run();
  }

  /** An open intent after a fold: as the folded form has it now. */
  #asFolded(e: JournalEntry): JournalEntry {
    if (!this.#parts.inDoubt) {
      // A schema without the column: serve the entry as the file now has it.
      const { in_doubt: _, ...row } = e.row;
      return entryOfRow(row, e.row.state, undefined);
    }
    return { ...e, base: e.row.state, baseDeadLetter: false, factsPending: false };
  }

  /** Loads the journal: the folded open intents, the log replayed over them, slots, checkpoint. */
  #load(): void {
    this.#mem.clear();
    const checkpoint = this.#s.getCheckpoint.get();
    this.#resume = this.#writtenResume = checkpoint?.resume_offset ?? null;
    this.#processed = this.#writtenProcessed = checkpoint?.processed_offset ?? null;
    this.#slots.load(this.#s.listSlots.all().map(toSlot));
    this.#maxFoldedEventOffset = this.#s.maxEventOffset.get()?.m ?? -1;
    for (const row of this.#s.openIntents.iterate()) {
      this.#mem.load(row.command_id, entryOfRow(row, row.state, undefined), false);
    }
    if (!this.#parts.log) return;
    const folded = (id: string): JournalEntry | undefined => {
      const row = this.#s.getIntent.get(id);
      if (row === undefined) return undefined;
      const dead = row.state === 'dead-lettered' ? this.#s.getDeadLetter.get(id) : undefined;
      return entryOfRow(row, row.state, dead);
    };
    for (const log of readLog(this.#db).all()) {
      const known = this.#mem.get(log.command_id);
      this.#mem.load(log.command_id, replayLogRow(log, known, folded, this.#path), true);
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
        this.#load();
        this.#seenVersion = version;
      }
      return fn();
    })();
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreError('STORE_CLOSED', 'the store is closed');
  }
}

function unknownIntent(commandId: string): StoreError {
  return new StoreError('STORE_UNKNOWN_INTENT', `no intent with commandId ${commandId}`);
}

function assertOffset(offset: number, what: string): void {
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new StoreError(
      'STORE_BAD_ARGUMENT',
      `${what} must be a non-negative integer, not ${offset}`,
    );
  }
}
