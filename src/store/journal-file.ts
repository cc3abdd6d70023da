import type BetterSqlite3 from 'better-sqlite3';
import { intentValues, logValues, replayLogRow } from './intent-log.js';
import type { JournalCheckpoint } from './journal-checkpoint.js';
import { entryOfRow, type JournalEntry } from './journal-entry.js';
import type { JournalMemory } from './journal-memory.js';
import type { JournalSlots } from './journal-slots.js';
import { toSlot } from './sqlite-rows.js';
import {
  readLog,
  type LogStatements,
  type SchemaParts,
  type SqliteStatements,
} from './sqlite-statements.js';
import type { NewIntent } from './store.js';

/**
 * Log rows after which a write folds the log into `intents` instead of appending to it. It bounds
 * the memory the journal keeps for finished intents (each changed intent stays in memory until
 * the next fold) and the replay at open; a fold costs about one upsert per intent it folds, all
 * in one commit on the event loop. So the bound is also the longest pause a fold makes: at 2,000
 * rows a fold took 15-20 ms and made the bot's slowest live events (max 50-55 ms at 200 events/s,
 * against 20 ms at 500 rows, with the same throughput within noise; 2026-11-26).
 */
export const FOLD_AFTER_LOG_ROWS = 500;

export type JournalFileInit = {
  readonly db: BetterSqlite3.Database;
  /** The file, for error messages. */
  readonly path: string;
  readonly parts: SchemaParts;
  readonly statements: SqliteStatements;
  /** Undefined: no log to append to (a read-only store, or an older schema): every write folds. */
  readonly log: LogStatements | undefined;
  readonly foldAfterLogRows: number;
  readonly mem: JournalMemory;
  readonly slots: JournalSlots;
  readonly checkpoint: JournalCheckpoint;
};

/**
 * The SQLite store's journal as the file has it: loads memory from the file (the folded open
 * intents with the log replayed over them), writes what memory changed (log rows, or a fold into
 * `intents` and `dead_letters`), and looks up the folded intents memory does not have.
 */
export class JournalFile {
  readonly #db: BetterSqlite3.Database;
  readonly #path: string;
  readonly #parts: SchemaParts;
  readonly #s: SqliteStatements;
  readonly #log: LogStatements | undefined;
  readonly #foldAfter: number;
  readonly #mem: JournalMemory;
  readonly #slots: JournalSlots;
  readonly #checkpoint: JournalCheckpoint;
  /** The highest offset of an event (or contract) intent in `intents`, or -1: see `foldedOf`. */
  #maxFoldedEventOffset = -1;

  constructor(init: JournalFileInit) {
    this.#db = init.db;
    this.#path = init.path;
    this.#parts = init.parts;
    this.#s = init.statements;
    this.#log = init.log;
    this.#foldAfter = init.foldAfterLogRows;
    this.#mem = init.mem;
    this.#slots = init.slots;
    this.#checkpoint = init.checkpoint;
  }

  /** The entry of an intent: from memory, or read from the folded form (not kept). */
  known(commandId: string): JournalEntry | undefined {
    return this.#mem.get(commandId) ?? this.#folded(commandId);
  }

  /**
   * The folded entries of the intents memory does not have. An intent of a ledger event above
   * every folded event offset cannot be folded (an event's offset is part of what it is, and its
   * commandId is made from it): the live stream's intents skip the lookup.
   */
  foldedOf(intents: readonly NewIntent[]): Map<string, JournalEntry> {
    const found = new Map<string, JournalEntry>();
    for (const intent of intents) {
      if (this.#mem.has(intent.commandId)) continue;
      if (intent.trigger.kind === 'event' && intent.offset > this.#maxFoldedEventOffset) continue;
      const entry = this.known(intent.commandId);
      if (entry !== undefined) found.set(intent.commandId, entry);
    }
    return found;
  }

  /**
   * Writes what changed since the last write, in one transaction: a log row per changed intent
   * (its facts only in its first row), or, with `fold` or once the log is long enough, the
   * whole log folded into `intents` and `dead_letters`. Memory changes only once it committed.
   */
  write(fold: boolean): void {
    const checkpoint = this.#checkpoint;
    const checkpointChanged = checkpoint.changed;
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
          log.append.run(...logValues(entry, entry.factsPending, this.#parts.attemptLog));
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
      if (checkpointChanged) this.#s.setCheckpoint.run(checkpoint.resume, checkpoint.processed);
    })();
    checkpoint.written();
    if (folding) this.#mem.folded((e) => this.#asFolded(e));
    else this.#mem.logged();
    this.#slots.written();
  }

  /** Loads the journal: the folded open intents, the log replayed over them, slots, checkpoint. */
  load(): void {
    this.#mem.clear();
    const checkpoint = this.#s.getCheckpoint.get();
    this.#checkpoint.load(checkpoint?.resume_offset ?? null, checkpoint?.processed_offset ?? null);
    this.#slots.load(this.#s.listSlots.all().map(toSlot));
    this.#maxFoldedEventOffset = this.#s.maxEventOffset.get()?.m ?? -1;
    for (const row of this.#s.openIntents.iterate()) {
      this.#mem.load(row.command_id, entryOfRow(row, row.state, undefined), false);
    }
    if (!this.#parts.log) return;
    const folded = (id: string): JournalEntry | undefined => this.#folded(id);
    for (const log of readLog(this.#db).all()) {
      const known = this.#mem.get(log.command_id);
      this.#mem.load(log.command_id, replayLogRow(log, known, folded, this.#path), true);
    }
  }

  /** The entry of an intent as the folded form has it. */
  #folded(commandId: string): JournalEntry | undefined {
    const row = this.#s.getIntent.get(commandId);
    if (row === undefined) return undefined;
    const dead = row.state === 'dead-lettered' ? this.#s.getDeadLetter.get(commandId) : undefined;
    return entryOfRow(row, row.state, dead);
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
      s.upsertIntent.run(...intentValues(e, this.#parts));
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
}
