import type BetterSqlite3 from 'better-sqlite3';
import type { Clock } from '../core/clock.js';
import { DEFAULTS } from '../core/defaults.js';
import { IllegalStateError } from '../core/illegal-state-error.js';
import { changedIntentRow } from './intent-row-change.js';
import { SqliteBatches, type CommitScheduler } from './sqlite-batches.js';
import {
  newIntentRow,
  toDeadLetter,
  toIntent,
  toJson,
  toSlot,
  type IntentRow,
} from './sqlite-rows.js';
import {
  prepareStatements,
  prepareStatementsV2,
  type SqliteStatements,
  type SqliteStatementsV2,
} from './sqlite-statements.js';
import {
  INTENT_STATES,
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
 * The SQLite Store. Made by `openSqliteStore`, which opens the file and migrates it; the
 * constructor only prepares statements on an open, migrated database.
 */
export class SqliteStore implements Store {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #batches: SqliteBatches;
  #closed = false;
  readonly #s: SqliteStatements;
  /** Statements on schema version 2 columns, prepared at first use (see `#v2`). */
  #s2: SqliteStatementsV2 | undefined;

  constructor(db: Db, clock: Clock, scheduleCommit?: CommitScheduler) {
    this.#db = db;
    this.#clock = clock;
    this.#s = prepareStatements(db);
    this.#batches = new SqliteBatches(db, () => this.#recomputeCheckpoint(), scheduleCommit);
  }

  batch<T>(fn: () => T): T {
    this.#assertOpen();
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
    this.#assertOpen();
    if (this.#batches.unsettledGroup) this.batch(() => this.#recomputeCheckpoint());
    return this.#s.getCheckpoint.get()?.resume_offset ?? undefined;
  }

  advanceCheckpoint(processedOffset: number): void {
    assertOffset(processedOffset, 'processedOffset');
    this.batch(() => {
      this.#s.raiseProcessed.run(processedOffset, processedOffset);
      // Recomputed when the outermost batch ends, after every intent of the batch is recorded.
      this.#batches.markUnsettled();
    });
  }

  resetCheckpoint(offset: number): void {
    assertOffset(offset, 'offset');
    this.batch(() => {
      this.#s.setCheckpoint.run(offset, offset);
    });
  }

  #recomputeCheckpoint(): void {
    const row = this.#s.getCheckpoint.get();
    if (row === undefined || row.processed_offset === null) return;
    // Open intents at or below the checkpoint (requeued, or jumped over by a reset) are resumed
    // from the journal, not by a replay, so they do not hold the checkpoint.
    const lowestOpen = this.#s.lowestOpenEventOffset.get(row.resume_offset ?? -1)?.lowest ?? null;
    let candidate = row.processed_offset;
    if (lowestOpen !== null) candidate = Math.min(candidate, lowestOpen - 1);
    const next = row.resume_offset === null ? candidate : Math.max(row.resume_offset, candidate);
    if (next !== row.resume_offset && next >= 0) this.#s.setResume.run(next);
  }

  // ---- intents ----

  recordIntents(intents: readonly NewIntent[]): RecordIntentsResult {
    return this.batch(() => {
      const now = this.#clock.now();
      const inserted: IntentRecord[] = [];
      const existing: IntentRecord[] = [];
      for (const intent of intents) {
        assertOffset(intent.offset, `offset of ${intent.commandId}`);
        const row = newIntentRow(intent, now);
        if (this.#s.insertIntent.run(row).changes === 1) {
          inserted.push(toIntent(row));
          this.#batches.markUnsettled();
        } else {
          existing.push(this.#require(intent.commandId));
        }
      }
      return { inserted, existing };
    });
  }

  transition(commandId: string, change: IntentChange): IntentRecord {
    return this.batch(() => {
      const current = this.#s.getIntent.get(commandId);
      if (current === undefined) throw unknownIntent(commandId);
      const next = changedIntentRow(current, change, this.#clock.now());
      if (change.to === 'dead-lettered') {
        this.#s.insertDeadLetter.run({
          command_id: commandId,
          error: toJson(change.error, 'error'),
          event: change.event === undefined ? null : toJson(change.event, 'event'),
          at: next.updated_at,
        });
      }
      this.#s.updateIntent.run(
        next.state,
        next.attempts,
        next.submission_id,
        next.last_error,
        next.next_attempt_at,
        next.completion_offset,
        next.completion_update_id,
        next.updated_at,
        commandId,
      );
      // Without the column (an older schema) an intent with an attempt counts as in doubt anyway.
      if (next.in_doubt === 1 && current.in_doubt === 0) this.#v2().markInDoubt.run(commandId);
      this.#batches.markUnsettled();
      return toIntent(next);
    });
  }

  getIntent(commandId: string): IntentRecord | undefined {
    this.#assertOpen();
    const row = this.#s.getIntent.get(commandId);
    return row === undefined ? undefined : toIntent(row);
  }

  hasEventIntent(ruleId: string, offset: number, nodeId: number): boolean {
    this.#assertOpen();
    return this.#v2().eventIntent.get(offset, nodeId, ruleId) !== undefined;
  }

  /**
   * Prepared lazily: a file opened read-only is not migrated, and a store opened on an older
   * schema (the migration tests do) must still serve everything else.
   */
  #v2(): SqliteStatementsV2 {
    this.#s2 ??= prepareStatementsV2(this.#db);
    return this.#s2;
  }

  openIntents(options: { readonly limit?: number } = {}): IntentRecord[] {
    this.#assertOpen();
    return this.#s.openIntents.all(options.limit ?? -1).map(toIntent);
  }

  listIntents(query: IntentQuery = {}): IntentRecord[] {
    this.#assertOpen();
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.states !== undefined) {
      where.push(`state IN (${query.states.map(() => '?').join(', ') || 'NULL'})`);
      params.push(...query.states);
    }
    if (query.ruleId !== undefined) {
      where.push('rule_id = ?');
      params.push(query.ruleId);
    }
    const sql =
      `SELECT * FROM intents ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ` +
      'ORDER BY justifying_offset, created_at, command_id LIMIT ?';
    return this.#db
      .prepare<unknown[], IntentRow>(sql)
      .all(...params, query.limit ?? DEFAULTS.store.listLimit)
      .map(toIntent);
  }

  countByState(): Record<IntentState, number> {
    this.#assertOpen();
    const counts = Object.fromEntries(INTENT_STATES.map((s) => [s, 0])) as Record<
      IntentState,
      number
    >;
    for (const row of this.#s.countByState.all()) counts[row.state] = row.n;
    return counts;
  }

  // ---- dead letters ----

  listDeadLetters(
    options: { readonly limit?: number; readonly ruleId?: string } = {},
  ): DeadLetter[] {
    this.#assertOpen();
    return this.#s.listDeadLetters
      .all({ rule_id: options.ruleId ?? null, limit: options.limit ?? DEFAULTS.store.listLimit })
      .map(toDeadLetter);
  }

  getDeadLetter(commandId: string): DeadLetter | undefined {
    this.#assertOpen();
    const row = this.#s.getDeadLetter.get(commandId);
    return row === undefined ? undefined : toDeadLetter(row);
  }

  requeueDeadLetter(commandId: string, options: { readonly deadline?: number } = {}): IntentRecord {
    return this.batch(() => {
      const current = this.#require(commandId);
      if (current.state !== 'dead-lettered') {
        throw new IllegalStateError(
          `intent ${commandId} is ${current.state}, not dead-lettered: only dead letters can be requeued`,
        );
      }
      const now = this.#clock.now();
      this.#s.requeue.run(now, options.deadline ?? null, now, commandId);
      this.#s.deleteDeadLetter.run(commandId);
      this.#batches.markUnsettled();
      return this.#require(commandId);
    });
  }

  purgeDeadLetter(commandId: string): boolean {
    return this.batch(() => {
      const current = this.getIntent(commandId);
      if (current?.state !== 'dead-lettered') return false;
      this.#s.deleteDeadLetter.run(commandId);
      this.#s.deleteIntent.run(commandId);
      return true;
    });
  }

  // ---- slots ----

  getSlotRecord(ruleId: string): SlotRecord | undefined {
    this.#assertOpen();
    const row = this.#s.getSlot.get(ruleId);
    return row === undefined ? undefined : toSlot(row);
  }

  listSlotRecords(): SlotRecord[] {
    this.#assertOpen();
    return this.#s.listSlots.all().map(toSlot);
  }

  beginSlot(ruleId: string, slot: number, snapshotOffset?: number): SlotRecord {
    return this.batch(() => {
      this.#s.beginSlot.run({
        rule_id: ruleId,
        slot,
        since: this.#clock.now(),
        snapshot_offset: snapshotOffset ?? null,
      });
      return toSlot(this.#s.getSlot.get(ruleId)!);
    });
  }

  completeSlot(ruleId: string, slot: number): SlotRecord {
    return this.batch(() => {
      this.#s.completeSlot.run({ rule_id: ruleId, slot });
      return toSlot(this.#s.getSlot.get(ruleId)!);
    });
  }

  // ---- housekeeping ----

  compact(olderThanMs: number): number {
    return this.batch(() => {
      const cutoff = this.#clock.now() - olderThanMs;
      const resume = this.checkpoint() ?? -1;
      return this.#s.compact.run({ cutoff, resume }).changes;
    });
  }

  close(): void {
    if (this.#closed) return;
    this.#batches.commitGroup();
    this.#closed = true;
    this.#db.close();
  }

  #require(commandId: string): IntentRecord {
    const row = this.#s.getIntent.get(commandId);
    if (row === undefined) throw unknownIntent(commandId);
    return toIntent(row);
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
