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
  type KnownEntry,
} from './journal-changes.js';
import { JournalCheckpoint } from './journal-checkpoint.js';
import type { JournalEntry } from './journal-entry.js';
import { JournalMemory } from './journal-memory.js';
import { byJustifyingOffset, countByState, listDeadLetters } from './journal-reads.js';
import { JournalSlots } from './journal-slots.js';
import { toDeadLetter, toIntent, type DeadLetterRow, type IntentRow } from './sqlite-rows.js';
import type {
  AttemptRecord,
  DeadLetter,
  IntentChange,
  IntentRecord,
  IntentState,
  NewIntent,
  RecordIntentsResult,
  SlotRecord,
} from './store.js';
import { StoreError } from './store-error.js';

/**
 * The rows a store's synchronous reads see besides memory, which shadows them: the SQLite
 * store's folded rows. The PostgreSQL store's synchronous reads see memory alone
 * (`MEMORY_ONLY`); its `queries()` read the database.
 */
export type FoldedRows = {
  intent(commandId: string): IntentRow | undefined;
  deadLetter(commandId: string): DeadLetterRow | undefined;
  /** Oldest first, at most `limit` (-1: all). */
  deadLetters(ruleId: string | undefined, limit: number): DeadLetterRow[];
  counts(): readonly { state: IntentState; n: number }[];
};

export const MEMORY_ONLY: FoldedRows = {
  intent: () => undefined,
  deadLetter: () => undefined,
  deadLetters: () => [],
  counts: () => [],
};

export type JournalStoreInit = {
  readonly clock: Clock;
  /** Group commit; undefined: every outermost batch writes at once (a local store only). */
  readonly scheduleCommit: CommitScheduler | undefined;
  readonly folded: FoldedRows;
};

/**
 * What the SQLite and PostgreSQL stores share: the journal in memory between commits
 * (JournalMemory, JournalCheckpoint, JournalSlots), the batches that change it with an undo per
 * change and write it (JournalBatches: group commit, write-ahead `sync`, a failed commit refusing
 * every later write), and the `Store` methods that are the same over them. Each store adds its
 * side: how a group is written (`writeGroup`), where an intent memory does not hold is looked up
 * (`known`, `knownOf`, the folded rows), its reads of the rows themselves, loading, compaction and
 * closing.
 *
 * A base class rather than a part each store holds: the shared part is most of the `Store`
 * contract, and a part would have each store forward every one of those methods to it.
 */
export abstract class JournalStore {
  protected readonly clock: Clock;
  protected readonly batches: JournalBatches;
  protected readonly mem: JournalMemory;
  protected readonly journalCheckpoint: JournalCheckpoint;
  protected readonly slots: JournalSlots;
  readonly #folded: FoldedRows;
  /** Set by the store's `close`: every later call throws STORE_CLOSED. */
  protected closed = false;

  protected constructor(init: JournalStoreInit) {
    this.clock = init.clock;
    this.#folded = init.folded;
    this.batches = new JournalBatches(
      { settle: () => this.journalCheckpoint.settle(), write: () => this.writeGroup() },
      init.scheduleCommit,
    );
    const onUndo = (undo: () => void): void => this.batches.onUndo(undo);
    this.mem = new JournalMemory(onUndo);
    this.journalCheckpoint = new JournalCheckpoint(this.mem, onUndo);
    this.slots = new JournalSlots(onUndo);
  }

  /**
   * Writes every change since the last write (see JournalBatches' `write` hook): at once and
   * synchronously, or, for a remote store, taken from memory now and committed by the promise.
   */
  protected abstract writeGroup(): void | Promise<void>;

  /** Throws if the store may not be changed (a read-only store). */
  protected assertWritable(): void {}

  /** Runs a read: a store whose file another process writes may reload first. */
  protected read<T>(fn: () => T): T {
    this.assertOpen();
    return fn();
  }

  /** The intent's entry: memory's, else what the store can look up synchronously. */
  protected known(commandId: string): JournalEntry | undefined {
    return this.mem.get(commandId);
  }

  /** `known` for a batch of new intents (a store may look them all up at once). */
  protected knownOf(_intents: readonly NewIntent[]): KnownEntry {
    return (id) => this.mem.get(id);
  }

  batch<T>(fn: () => T): T {
    this.assertOpen();
    this.assertWritable();
    return this.batches.batch(fn);
  }

  sync(): Promise<void> {
    return this.batches.sync();
  }

  flush(): void {
    this.batches.flush();
  }

  // ---- checkpoint ----

  checkpoint(): number | undefined {
    return this.read(() => {
      if (this.batches.unsettledGroup) this.batch(() => this.journalCheckpoint.settle());
      return this.journalCheckpoint.resume ?? undefined;
    });
  }

  advanceCheckpoint(processedOffset: number): void {
    assertOffset(processedOffset, 'processedOffset');
    this.batch(() => {
      this.journalCheckpoint.advance(processedOffset);
      // Recomputed when the outermost batch ends, after every intent of the batch is recorded.
      this.batches.markUnsettled();
    });
  }

  resetCheckpoint(offset: number): void {
    assertOffset(offset, 'offset');
    this.batch(() => this.journalCheckpoint.reset(offset));
  }

  // ---- intents ----

  recordIntents(intents: readonly NewIntent[]): RecordIntentsResult {
    return this.batch(() => {
      const result = recordEntries(this.mem, intents, this.clock.now(), this.knownOf(intents));
      if (result.inserted.length > 0) this.batches.markUnsettled();
      return result;
    });
  }

  transition(commandId: string, change: IntentChange): IntentRecord {
    return this.batch(() => {
      const now = this.clock.now();
      const record = changeEntry(this.mem, this.known(commandId), commandId, change, now);
      this.batches.markUnsettled();
      return record;
    });
  }

  getIntent(commandId: string): IntentRecord | undefined {
    return this.read(() => {
      const entry = this.mem.get(commandId);
      if (entry !== undefined) return entry.deleted ? undefined : entry.record;
      const row = this.#folded.intent(commandId);
      return row === undefined ? undefined : toIntent(row);
    });
  }

  getAttempts(commandId: string): AttemptRecord[] | undefined {
    return this.read(() => {
      const row = this.#row(commandId);
      return row === undefined ? undefined : attemptsOf(row.attempt_log);
    });
  }

  getRecordedEvent(commandId: string): unknown {
    return this.read(() => {
      const text = this.#row(commandId)?.event ?? null;
      return text === null ? undefined : (JSON.parse(text) as unknown);
    });
  }

  openIntents(options: { readonly limit?: number } = {}): IntentRecord[] {
    return this.read(() => {
      const open = this.mem.openRecords().sort(byJustifyingOffset);
      const limit = options.limit ?? -1;
      return limit < 0 ? open : open.slice(0, limit);
    });
  }

  countByState(): Record<IntentState, number> {
    return this.read(() => countByState(this.mem, this.#folded.counts()));
  }

  // ---- dead letters ----

  listDeadLetters(
    options: { readonly limit?: number; readonly ruleId?: string } = {},
  ): DeadLetter[] {
    return this.read(() =>
      listDeadLetters(
        this.mem,
        (limit) => this.#folded.deadLetters(options.ruleId, limit),
        options.ruleId,
        options.limit ?? DEFAULTS.store.listLimit,
      ),
    );
  }

  getDeadLetter(commandId: string): DeadLetter | undefined {
    return this.read(() => {
      const entry = this.mem.get(commandId);
      if (entry !== undefined) return entry.deleted ? undefined : entry.deadLetter?.value;
      const row = this.#folded.deadLetter(commandId);
      return row === undefined ? undefined : toDeadLetter(row);
    });
  }

  requeueDeadLetter(commandId: string, options: { readonly deadline?: number } = {}): IntentRecord {
    return this.batch(() => {
      const current = this.known(commandId);
      const now = this.clock.now();
      const record = requeueEntry(this.mem, current, commandId, now, options.deadline);
      this.batches.markUnsettled();
      return record;
    });
  }

  purgeDeadLetter(commandId: string): boolean {
    return this.batch(() => purgeEntry(this.mem, this.known(commandId), commandId));
  }

  // ---- slots ----

  getSlotRecord(ruleId: string): SlotRecord | undefined {
    return this.read(() => this.slots.get(ruleId));
  }

  listSlotRecords(): SlotRecord[] {
    return this.read(() => this.slots.list());
  }

  beginSlot(ruleId: string, slot: number, snapshotOffset?: number): SlotRecord {
    return this.batch(() => this.slots.begin(ruleId, slot, this.clock.now(), snapshotOffset));
  }

  completeSlot(ruleId: string, slot: number): SlotRecord {
    return this.batch(() => this.slots.complete(ruleId, slot));
  }

  protected assertOpen(): void {
    if (this.closed) throw new StoreError('STORE_CLOSED', 'the store is closed');
  }

  /** The intent's row: memory's (undefined once purged), else the folded one. */
  #row(commandId: string): IntentRow | undefined {
    const entry = this.mem.get(commandId);
    if (entry !== undefined) return entry.deleted ? undefined : entry.row;
    return this.#folded.intent(commandId);
  }
}
