import type BetterSqlite3 from 'better-sqlite3';
import type { Clock } from '../core/clock.js';
import { IllegalStateError } from '../core/illegal-state-error.js';
import {
  INTENT_STATES,
  INTENT_TRANSITIONS,
  TERMINAL_STATES,
  type DeadLetter,
  type IntentChange,
  type IntentQuery,
  type IntentRecord,
  type IntentState,
  type NewIntent,
  type RecordIntentsResult,
  type SlotRecord,
  type Store,
  type TriggerKey,
} from './store.js';
import { StoreError } from './store-error.js';

type Db = BetterSqlite3.Database;

type IntentRow = {
  command_id: string;
  user_id: string;
  act_as: string;
  rule_id: string;
  revision: number;
  action_index: number;
  trigger_kind: 'event' | 'slot';
  trigger_update_id: string | null;
  trigger_node_id: number | null;
  trigger_slot: number | null;
  trigger_contract_id: string | null;
  justifying_offset: number;
  payload: string;
  event: string | null;
  state: IntentState;
  attempts: number;
  submission_id: string | null;
  last_error: string | null;
  next_attempt_at: number | null;
  deadline: number | null;
  created_at: number;
  updated_at: number;
  completion_offset: number | null;
  completion_update_id: string | null;
  /** Since schema version 2 (absent in a row read from an older file). */
  in_doubt?: number;
};

type DeadLetterRow = IntentRow & {
  dl_error: string;
  dl_event: string | null;
  dead_lettered_at: number;
};

type SlotRow = {
  rule_id: string;
  last_completed_slot: number | null;
  in_progress_slot: number | null;
  in_progress_since: number | null;
  snapshot_offset: number | null;
};

const OPEN = `state IN ('pending', 'submitted')`;
const COMPACTABLE = `state IN ('succeeded', 'duplicate', 'rejected')`;
const DEFAULT_LIST_LIMIT = 1000;

/**
 * The SQLite Store. Made by `openSqliteStore`, which opens the file and migrates it; the
 * constructor only prepares statements on an open, migrated database.
 */
export class SqliteStore implements Store {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #tx: (fn: () => unknown) => unknown;
  /** Set: batches join one group transaction, committed when this callback runs it. */
  readonly #scheduleCommit: ((commit: () => void) => void) | undefined;
  #depth = 0;
  #dirty = false;
  #closed = false;
  /** A group transaction is open (only with `#scheduleCommit`). */
  #grouped = false;
  /** Waiting for the open group to commit (see `sync`). */
  #syncWaiters: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  /** A group commit failed: every later write is refused (see `#commitGroup`). */
  #failed: StoreError | undefined;
  readonly #s: ReturnType<typeof prepare>;
  /** Statements on schema version 2 columns, prepared at first use (see `#v2`). */
  #s2: ReturnType<typeof prepareV2> | undefined;

  constructor(db: Db, clock: Clock, scheduleCommit?: (commit: () => void) => void) {
    this.#db = db;
    this.#clock = clock;
    this.#scheduleCommit = scheduleCommit;
    this.#s = prepare(db);
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
        if (this.#depth === 1 && this.#dirty && !this.#grouped) this.#recomputeCheckpoint();
        return result;
      } finally {
        this.#depth--;
        if (this.#depth === 0 && !this.#grouped) this.#dirty = false;
      }
    });
  }

  batch<T>(fn: () => T): T {
    this.#assertOpen();
    if (this.#failed !== undefined) throw this.#failed;
    if (this.#scheduleCommit !== undefined && !this.#grouped && !this.#db.inTransaction) {
      this.#db.exec('BEGIN');
      this.#grouped = true;
      this.#scheduleCommit(() => this.#commitGroup());
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
    this.#commitGroup();
    if (this.#failed !== undefined) throw this.#failed;
  }

  /**
   * Commits the open group. If the commit fails, the group's changes are rolled back and the
   * store refuses every later write: continuing would let a later commit move the checkpoint
   * past events whose intents were in the lost group. The bot stops; the next start replays
   * from the last committed checkpoint.
   */
  #commitGroup(): void {
    if (!this.#grouped) return;
    const waiters = this.#syncWaiters;
    this.#syncWaiters = [];
    try {
      if (this.#dirty) this.#recomputeCheckpoint();
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
      this.#dirty = false;
    }
    for (const w of waiters) {
      if (this.#failed === undefined) w.resolve();
      else w.reject(this.#failed);
    }
  }

  // ---- checkpoint ----

  checkpoint(): number | undefined {
    this.#assertOpen();
    if (this.#grouped && this.#dirty) this.batch(() => this.#recomputeCheckpoint());
    return this.#s.getCheckpoint.get()?.resume_offset ?? undefined;
  }

  advanceCheckpoint(processedOffset: number): void {
    assertOffset(processedOffset, 'processedOffset');
    this.batch(() => {
      this.#s.raiseProcessed.run(processedOffset, processedOffset);
      // Recomputed when the outermost batch ends, after every intent of the batch is recorded.
      this.#dirty = true;
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
        const t = intent.trigger;
        const row: IntentRow = {
          command_id: intent.commandId,
          user_id: intent.userId,
          act_as: JSON.stringify([...intent.actAs].sort()),
          rule_id: intent.ruleId,
          revision: intent.revision,
          action_index: intent.actionIndex,
          // A `contract` trigger is stored as an event row without an update id (the column
          // the table's CHECK allows; no table rebuild for a new kind): it stands for the
          // creation event, so it holds the checkpoint and is compacted like the event rows.
          trigger_kind: t.kind === 'slot' ? 'slot' : 'event',
          trigger_update_id: t.kind === 'event' ? t.updateId : null,
          trigger_node_id: t.kind === 'slot' ? null : t.nodeId,
          trigger_slot: t.kind === 'slot' ? t.slot : null,
          trigger_contract_id: t.kind === 'event' ? null : t.contractId,
          justifying_offset: intent.offset,
          payload: toJson(intent.payload, `payload of ${intent.commandId}`),
          event: intent.event === undefined ? null : toJson(intent.event, 'event'),
          state: 'pending',
          attempts: 0,
          submission_id: null,
          last_error: null,
          next_attempt_at: intent.nextAttemptAt ?? now,
          deadline: intent.deadline ?? null,
          created_at: now,
          updated_at: now,
          completion_offset: null,
          completion_update_id: null,
        };
        if (this.#s.insertIntent.run(row).changes === 1) {
          inserted.push(toIntent(row));
          this.#dirty = true;
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
      const state = current.state;
      if (!INTENT_TRANSITIONS[state].includes(change.to)) {
        throw new IllegalStateError(
          `intent ${commandId} cannot go from ${state} to ${change.to}` +
            (TERMINAL_STATES.has(state)
              ? `: ${state} is final`
              : `; allowed: ${INTENT_TRANSITIONS[state].join(', ')}`),
        );
      }
      // The new row is computed here and written whole, so what is returned is what is stored.
      const next: IntentRow = { ...current, state: change.to, updated_at: this.#clock.now() };
      const wasInDoubt = inDoubtOf(current);
      // An attempt left without a definite answer may have committed: a resubmission over an
      // outstanding attempt, or a retry after an answer that was not definite.
      const inDoubt =
        wasInDoubt ||
        (current.state === 'submitted' &&
          (change.to === 'submitted' || (change.to === 'pending' && change.definite !== true)));
      if (inDoubt) next.in_doubt = 1;
      switch (change.to) {
        case 'submitted':
          next.attempts = current.attempts + 1;
          next.submission_id = change.submissionId;
          next.next_attempt_at = null;
          break;
        case 'pending':
          next.next_attempt_at = change.nextAttemptAt;
          if (change.error !== undefined) next.last_error = toJson(change.error, 'error');
          break;
        case 'succeeded':
        case 'duplicate':
          next.completion_offset = change.completionOffset ?? null;
          next.completion_update_id = change.updateId ?? null;
          next.next_attempt_at = null;
          break;
        case 'rejected':
          next.last_error = toJson(change.error, 'error');
          next.completion_offset = change.completionOffset ?? null;
          next.next_attempt_at = null;
          break;
        case 'dead-lettered':
          next.last_error = toJson(change.error, 'error');
          next.next_attempt_at = null;
          this.#s.insertDeadLetter.run({
            command_id: commandId,
            error: next.last_error,
            event: change.event === undefined ? null : toJson(change.event, 'event'),
            at: next.updated_at,
          });
          break;
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
      if (inDoubt && current.in_doubt === 0) this.#v2().markInDoubt.run(commandId);
      this.#dirty = true;
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
  #v2(): ReturnType<typeof prepareV2> {
    this.#s2 ??= prepareV2(this.#db);
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
      .all(...params, query.limit ?? DEFAULT_LIST_LIMIT)
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
      .all({ rule_id: options.ruleId ?? null, limit: options.limit ?? DEFAULT_LIST_LIMIT })
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
      this.#dirty = true;
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
    this.#commitGroup();
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

function prepare(db: Db) {
  return {
    getCheckpoint: db.prepare<
      [],
      { resume_offset: number | null; processed_offset: number | null }
    >('SELECT resume_offset, processed_offset FROM checkpoint WHERE id = 1'),
    raiseProcessed: db.prepare<[number, number]>(
      'UPDATE checkpoint SET processed_offset = max(coalesce(processed_offset, ?), ?) WHERE id = 1',
    ),
    setResume: db.prepare<[number]>('UPDATE checkpoint SET resume_offset = ? WHERE id = 1'),
    setCheckpoint: db.prepare<[number, number]>(
      'UPDATE checkpoint SET resume_offset = ?, processed_offset = ? WHERE id = 1',
    ),
    lowestOpenEventOffset: db.prepare<[number], { lowest: number | null }>(
      `SELECT min(justifying_offset) AS lowest FROM intents
       WHERE ${OPEN} AND trigger_kind = 'event' AND justifying_offset > ?`,
    ),
    insertIntent: db.prepare<[IntentRow]>(
      `INSERT INTO intents (command_id, user_id, act_as, rule_id, revision, action_index,
         trigger_kind, trigger_update_id, trigger_node_id, trigger_slot, trigger_contract_id,
         justifying_offset, payload, event, state, attempts, next_attempt_at, deadline,
         created_at, updated_at)
       VALUES (@command_id, @user_id, @act_as, @rule_id, @revision, @action_index,
         @trigger_kind, @trigger_update_id, @trigger_node_id, @trigger_slot, @trigger_contract_id,
         @justifying_offset, @payload, @event, @state, @attempts, @next_attempt_at, @deadline,
         @created_at, @updated_at)
       ON CONFLICT (command_id) DO NOTHING`,
    ),
    getIntent: db.prepare<[string], IntentRow>('SELECT * FROM intents WHERE command_id = ?'),
    openIntents: db.prepare<[number], IntentRow>(
      `SELECT * FROM intents WHERE ${OPEN} ORDER BY justifying_offset, created_at, command_id LIMIT ?`,
    ),
    countByState: db.prepare<[], { state: IntentState; n: number }>(
      'SELECT state, count(*) AS n FROM intents GROUP BY state',
    ),
    updateIntent: db.prepare<
      [
        IntentState,
        number,
        string | null,
        string | null,
        number | null,
        number | null,
        string | null,
        number,
        string,
      ]
    >(
      `UPDATE intents SET state = ?, attempts = ?, submission_id = ?, last_error = ?,
         next_attempt_at = ?, completion_offset = ?, completion_update_id = ?, updated_at = ?
       WHERE command_id = ?`,
    ),
    insertDeadLetter: db.prepare<
      [{ command_id: string; error: string; event: string | null; at: number }]
    >(
      `INSERT INTO dead_letters (command_id, error, event, dead_lettered_at)
       SELECT command_id, @error, coalesce(@event, event), @at FROM intents
       WHERE command_id = @command_id
       ON CONFLICT (command_id) DO UPDATE SET error = excluded.error, event = excluded.event,
         dead_lettered_at = excluded.dead_lettered_at`,
    ),
    listDeadLetters: db.prepare<[{ rule_id: string | null; limit: number }], DeadLetterRow>(
      `SELECT i.*, d.error AS dl_error, d.event AS dl_event, d.dead_lettered_at
       FROM dead_letters d JOIN intents i USING (command_id)
       WHERE @rule_id IS NULL OR i.rule_id = @rule_id
       ORDER BY d.dead_lettered_at, d.command_id LIMIT @limit`,
    ),
    getDeadLetter: db.prepare<[string], DeadLetterRow>(
      `SELECT i.*, d.error AS dl_error, d.event AS dl_event, d.dead_lettered_at
       FROM dead_letters d JOIN intents i USING (command_id) WHERE d.command_id = ?`,
    ),
    requeue: db.prepare<[number, number | null, number, string]>(
      `UPDATE intents SET state = 'pending', attempts = 0, next_attempt_at = ?, deadline = ?,
         updated_at = ? WHERE command_id = ?`,
    ),
    deleteDeadLetter: db.prepare<[string]>('DELETE FROM dead_letters WHERE command_id = ?'),
    deleteIntent: db.prepare<[string]>('DELETE FROM intents WHERE command_id = ?'),
    getSlot: db.prepare<[string], SlotRow>('SELECT * FROM schedule_slots WHERE rule_id = ?'),
    listSlots: db.prepare<[], SlotRow>('SELECT * FROM schedule_slots ORDER BY rule_id'),
    beginSlot: db.prepare<
      [{ rule_id: string; slot: number; since: number; snapshot_offset: number | null }]
    >(
      `INSERT INTO schedule_slots (rule_id, in_progress_slot, in_progress_since, snapshot_offset)
       VALUES (@rule_id, @slot, @since, @snapshot_offset)
       ON CONFLICT (rule_id) DO UPDATE SET in_progress_slot = @slot, in_progress_since = @since,
         snapshot_offset = @snapshot_offset`,
    ),
    completeSlot: db.prepare<[{ rule_id: string; slot: number }]>(
      `INSERT INTO schedule_slots (rule_id, last_completed_slot) VALUES (@rule_id, @slot)
       ON CONFLICT (rule_id) DO UPDATE SET
         last_completed_slot = max(coalesce(last_completed_slot, @slot), @slot),
         in_progress_slot = CASE WHEN in_progress_slot <= @slot THEN NULL ELSE in_progress_slot END,
         in_progress_since = CASE WHEN in_progress_slot <= @slot THEN NULL ELSE in_progress_since END,
         snapshot_offset = CASE WHEN in_progress_slot <= @slot THEN NULL ELSE snapshot_offset END`,
    ),
    compact: db.prepare<[{ cutoff: number; resume: number }]>(
      `DELETE FROM intents WHERE ${COMPACTABLE} AND updated_at < @cutoff
         AND (trigger_kind = 'slot' OR justifying_offset <= @resume)`,
    ),
  };
}

function prepareV2(db: Db) {
  return {
    markInDoubt: db.prepare<[string]>('UPDATE intents SET in_doubt = 1 WHERE command_id = ?'),
    eventIntent: db.prepare<[number, number, string], { one: number }>(
      `SELECT 1 AS one FROM intents
       WHERE justifying_offset = ? AND trigger_node_id = ? AND trigger_kind = 'event'
         AND trigger_update_id IS NOT NULL AND rule_id = ? LIMIT 1`,
    ),
  };
}

/** A row of an older schema does not know: any attempt counts as in doubt. */
function inDoubtOf(row: IntentRow): boolean {
  return row.in_doubt === undefined ? row.attempts > 0 : row.in_doubt === 1;
}

function unknownIntent(commandId: string): StoreError {
  return new StoreError('STORE_UNKNOWN_INTENT', `no intent with commandId ${commandId}`);
}

function toIntent(row: IntentRow): IntentRecord {
  const trigger: TriggerKey =
    row.trigger_kind === 'slot'
      ? { kind: 'slot', slot: row.trigger_slot ?? 0, contractId: row.trigger_contract_id ?? '' }
      : row.trigger_update_id === null && row.trigger_contract_id !== null
        ? {
            kind: 'contract',
            contractId: row.trigger_contract_id,
            nodeId: row.trigger_node_id ?? 0,
          }
        : {
            kind: 'event',
            updateId: row.trigger_update_id ?? '',
            nodeId: row.trigger_node_id ?? 0,
          };
  return {
    commandId: row.command_id,
    userId: row.user_id,
    actAs: JSON.parse(row.act_as) as string[],
    ruleId: row.rule_id,
    revision: row.revision,
    actionIndex: row.action_index,
    trigger,
    offset: row.justifying_offset,
    payload: JSON.parse(row.payload) as unknown,
    state: row.state,
    attempts: row.attempts,
    ...(row.submission_id === null ? {} : { submissionId: row.submission_id }),
    ...(row.last_error === null ? {} : { lastError: JSON.parse(row.last_error) as unknown }),
    ...(row.next_attempt_at === null ? {} : { nextAttemptAt: row.next_attempt_at }),
    ...(row.deadline === null ? {} : { deadline: row.deadline }),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.completion_offset === null ? {} : { completionOffset: row.completion_offset }),
    ...(row.completion_update_id === null ? {} : { completionUpdateId: row.completion_update_id }),
    ...(inDoubtOf(row) ? { inDoubt: true as const } : {}),
  };
}

function toDeadLetter(row: DeadLetterRow): DeadLetter {
  return {
    intent: toIntent(row),
    error: JSON.parse(row.dl_error) as unknown,
    ...(row.dl_event === null ? {} : { event: JSON.parse(row.dl_event) as unknown }),
    deadLetteredAt: row.dead_lettered_at,
  };
}

function toSlot(row: SlotRow): SlotRecord {
  return {
    ruleId: row.rule_id,
    ...(row.last_completed_slot === null ? {} : { lastCompletedSlot: row.last_completed_slot }),
    ...(row.in_progress_slot === null ? {} : { inProgressSlot: row.in_progress_slot }),
    ...(row.in_progress_since === null ? {} : { inProgressSince: row.in_progress_since }),
    ...(row.snapshot_offset === null ? {} : { snapshotOffset: row.snapshot_offset }),
  };
}

function toJson(value: unknown, what: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new StoreError('STORE_NOT_JSON', `${what} cannot be stored as JSON`, { cause: err });
  }
  if (text === undefined) {
    throw new StoreError('STORE_NOT_JSON', `${what} is not a JSON value`);
  }
  return text;
}

function assertOffset(offset: number, what: string): void {
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new StoreError(
      'STORE_BAD_ARGUMENT',
      `${what} must be a non-negative integer, not ${offset}`,
    );
  }
}

function isThenable(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
