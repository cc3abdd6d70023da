import type pg from 'pg';
import type { Clock } from '../../core/clock.js';
import { DEFAULTS } from '../../core/defaults.js';
import type { CommitScheduler } from '../journal-batches.js';
import type { JournalQueries } from '../journal-queries.js';
import { listIntents } from '../journal-reads.js';
import { JournalStore, MEMORY_ONLY } from '../journal-store.js';
import type { KnownEntry } from '../journal-changes.js';
import type { JournalEntry } from '../journal-entry.js';
import type { IntentQuery, IntentRecord, NewIntent, RecordIntentsResult, Store } from '../store.js';
import { StoreError } from '../store-error.js';
import type { CommitFence, LeaseHold } from './commit-fence.js';
import type { JournalContents, JournalTransfer } from '../journal-transfer.js';
import { collectPgCommit } from './collect-pg-commit.js';
import { loadPgJournal, readPgRow } from './load-pg-journal.js';
import { exportPgJournal, importPgJournal } from './pg-journal-transfer.js';
import { PgMemoryBound } from './pg-memory-bound.js';
import { PgJournalQueries } from './pg-journal-queries.js';
import { PgJournalWriter } from './pg-journal-writer.js';

export type PgStoreInit = {
  /** A pool on a migrated schema; the store ends it at close. */
  readonly pool: pg.Pool;
  readonly schema: string;
  readonly clock: Clock;
  /** The checkpoint's row: 'default' for a single instance. */
  readonly owner?: string;
  /** When the group of a turn commits: default `setImmediate`. */
  readonly scheduleCommit?: CommitScheduler;
  /** Checked in each commit's transaction before its writes (a fleet member's lease). */
  readonly fence?: CommitFence;
  /** The leases a commit writing for these rules writes under (with `fence`). */
  readonly holdsFor?: (ruleIds: ReadonlySet<string>) => readonly LeaseHold[];
  /**
   * A fleet member's store: memory holds these rules' intents, dead letters and slots only, the
   * checkpoint is loaded as the lowest of theirs and written to each (a row per rule), every
   * commit that moves it writes under all of their leases, and compaction deletes only theirs.
   */
  readonly rules?: readonly string[];
  /** For error messages: the database, password masked. */
  readonly where: string;
  /** Runs once the pool is ended (the writer's lock goes). */
  readonly onClose?: () => Promise<void>;
};

/**
 * The PostgreSQL Store. The same contract as the SQLite store, and the same core
 * (JournalStore): memory is the truth between commits (JournalMemory, JournalCheckpoint,
 * JournalSlots), a batch changes only memory with an undo per change, and the batches of one
 * event-loop turn form a group that commits in ONE statement (PgJournalWriter), commits one at a
 * time and in order; `sync()` resolves on that COMMIT. A failed commit undoes memory back to the
 * last commit and the store refuses every later write (STORE_COMMIT_FAILED): the bot stops and
 * replays from the checkpoint.
 *
 * Rows: one `lb_intents` row per intent, upserted when it changes (its facts only with the first
 * write, the changing columns after), its dead letter in the same row. SQLite appends a log row
 * per change and folds it because an append is its cheapest write; PostgreSQL's MVCC makes an
 * update of one row as cheap as an insert and leaves nothing to fold, and the operator's reads
 * read the rows as they are.
 *
 * Memory holds what the hot path's synchronous reads need, not the journal (PgMemoryBound).
 * Reads of what it dropped: `getIntent` and the other synchronous operator reads see memory
 * only (`queries()` reads the database), and `hasEventIntent` at or below the checkpoint
 * throws: ask `hasEventIntentAsync`. `recordIntents` of an intent memory dropped (a completed
 * slot run again, an event below the checkpoint) finds it only after `lookUpIntents`, which the
 * runtime awaits before each recording; the writer refuses a commit that would overwrite a
 * finished row with a new intent, should one be recorded without it.
 */
export class PgStore extends JournalStore implements Store, JournalTransfer {
  readonly #pool: pg.Pool;
  readonly #writer: PgJournalWriter;
  readonly #queries: PgJournalQueries;
  readonly #holdsFor: PgStoreInit['holdsFor'];
  readonly #rules: PgStoreInit['rules'];
  readonly #onClose: PgStoreInit['onClose'];
  readonly #owner: string;
  readonly #where: string;
  readonly #schema: string;
  readonly #bound: PgMemoryBound;
  /** Rows `lookUpIntents` found for the next `recordIntents` (memory lacked them). */
  readonly #lookedUp = new Map<string, JournalEntry>();
  #ended: Promise<void> | undefined;

  /** Opens the store on a migrated schema: loads what memory holds (see the class comment). */
  static async open(init: PgStoreInit): Promise<PgStore> {
    const store = new PgStore(init);
    await store.#load(store.#owner, store.#where);
    return store;
  }

  private constructor(init: PgStoreInit) {
    super({
      clock: init.clock,
      scheduleCommit: init.scheduleCommit ?? ((commit) => setImmediate(commit)),
      folded: MEMORY_ONLY,
    });
    this.#pool = init.pool;
    this.#holdsFor = init.holdsFor;
    this.#rules = init.rules;
    this.#onClose = init.onClose;
    this.#owner = init.owner ?? 'default';
    this.#where = init.where;
    this.#schema = init.schema;
    this.#writer = new PgJournalWriter(init.pool, init.schema, this.#owner, init.fence, init.rules);
    this.#queries = new PgJournalQueries(init.pool, init.schema);
    this.#bound = new PgMemoryBound(this.mem, this.slots);
  }

  /** The operator's reads, from the database (committed rows, every instance's). */
  queries(): JournalQueries {
    return this.#queries;
  }

  hasEventIntent(ruleId: string, offset: number, nodeId: number): boolean {
    this.assertOpen();
    if (this.mem.hasEvent(ruleId, offset, nodeId)) return true;
    const resume = this.journalCheckpoint.resume;
    if (resume === null || offset > resume) return false;
    throw new StoreError(
      'STORE_BAD_ARGUMENT',
      `the PostgreSQL store keeps no intents of events at or below the checkpoint (${resume}) in memory; offset ${offset} needs hasEventIntentAsync`,
    );
  }

  /** `hasEventIntent` for any offset: memory, then the database's committed rows. */
  async hasEventIntentAsync(ruleId: string, offset: number, nodeId: number): Promise<boolean> {
    this.assertOpen();
    if (this.mem.hasEvent(ruleId, offset, nodeId)) return true;
    const ids = await this.#queries.eventIntentIds(ruleId, offset, nodeId);
    return ids.some((id) => this.mem.get(id)?.deleted !== true);
  }

  /**
   * Reads from the database those of `intents` memory may have dropped (PgMemoryBound.mayLack),
   * so that the next `recordIntents` of them finds the ones recorded and leaves them as they are,
   * as the SQLite store does from its folded rows. Undefined when memory holds all of them (a
   * live event above the checkpoint, a new slot): no round trip.
   */
  lookUpIntents(intents: readonly NewIntent[]): Promise<void> | undefined {
    this.assertOpen();
    const ids = intents
      .filter((i) => this.mem.get(i.commandId) === undefined && this.#bound.mayLack(i))
      .map((i) => i.commandId);
    return ids.length === 0 ? undefined : this.#lookUp(ids);
  }

  override recordIntents(intents: readonly NewIntent[]): RecordIntentsResult {
    try {
      return super.recordIntents(intents);
    } finally {
      for (const i of intents) this.#lookedUp.delete(i.commandId);
    }
  }

  protected override knownOf(): KnownEntry {
    return (id) => this.mem.get(id) ?? this.#lookedUp.get(id);
  }

  /** The intents memory holds (see the class comment); `queries()` lists the database's. */
  listIntents(query: IntentQuery = {}): IntentRecord[] {
    this.assertOpen();
    return listIntents(this.mem, undefined, query, query.limit ?? DEFAULTS.store.listLimit);
  }

  // ---- housekeeping ----

  /**
   * Deletes, in the database, the finished intents last changed before the cutoff that the
   * committed checkpoint has passed; memory holds none of them that it still needs. Returns
   * at once with 0 (the count is not known synchronously); `compactAsync` tells it.
   */
  compact(olderThanMs: number): number {
    this.assertOpen();
    void this.compactAsync(olderThanMs).catch(() => undefined);
    return 0;
  }

  /** `compact`, resolving with the number of intents deleted. */
  async compactAsync(olderThanMs: number): Promise<number> {
    this.assertOpen();
    const cutoff = this.clock.now() - olderThanMs;
    return this.#writer.compact(cutoff, this.#bound.committedResume ?? -1);
  }

  // ---- transfer (`ledgerbot state export|import`) ----

  /** The journal as committed, in one snapshot (what this store has not committed is not in it). */
  exportJournal(): Promise<JournalContents> {
    this.assertOpen();
    return exportPgJournal(this.#pool, this.#schema, this.#owner);
  }

  /** See JournalTransfer; memory is loaded again from what it wrote. */
  async importJournal(journal: JournalContents): Promise<void> {
    this.assertOpen();
    if (!this.batches.idle) {
      throw new StoreError(
        'STORE_BAD_ARGUMENT',
        'a journal is imported into a store without uncommitted changes: await sync() first',
      );
    }
    const target = { schema: this.#schema, owner: this.#owner, where: this.#where };
    await importPgJournal(this.#pool, this.#writer, target, journal);
    this.mem.clear();
    await this.#load(this.#owner, this.#where);
  }

  /** Commits what is left, then ends the pool (see `ended`). Idempotent. */
  close(): void {
    if (this.closed) return;
    this.batches.commitGroup();
    this.closed = true;
    const onClose = this.#onClose;
    this.#ended = this.#writer
      .settled()
      .then(() => this.#pool.end())
      .finally(() => onClose?.());
  }

  /** Closes, and resolves once the last commit settled and the pool's connections are closed. */
  async closeAsync(): Promise<void> {
    this.close();
    await this.#ended;
  }

  /** Takes the group's changes from memory and commits them (see JournalBatches.write). */
  protected writeGroup(): Promise<void> | undefined {
    const mem = this.mem;
    const slots = this.slots;
    const checkpoint = this.journalCheckpoint;
    const collected = collectPgCommit(mem, slots, checkpoint, this.#rules, this.#holdsFor);
    if (collected === undefined) return undefined;
    const { commit, sent } = collected;
    const done = this.#writer.commit(commit);
    mem.sent();
    slots.written();
    checkpoint.written();
    return done.then(() =>
      this.#bound.commitIn(sent, commit.checkpoint?.resume, commit.slots.length > 0, !this.closed),
    );
  }

  async #lookUp(commandIds: readonly string[]): Promise<void> {
    for (const row of await this.#queries.intentRows(commandIds)) {
      this.#lookedUp.set(row.command_id, readPgRow(row, this.#where));
    }
  }

  async #load(owner: string, where: string): Promise<void> {
    const loaded = await loadPgJournal(this.#pool, this.#schema, owner, where, this.#rules);
    this.journalCheckpoint.load(loaded.resume, loaded.processed);
    this.#bound.committedResume = loaded.resume;
    this.slots.load(loaded.slots);
    for (const entry of loaded.entries) {
      this.mem.load(entry.row.command_id, entry, false);
      this.#bound.committed(entry);
    }
  }
}
