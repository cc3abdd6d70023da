import type BetterSqlite3 from 'better-sqlite3';
import type { DeadLetterRow, IntentRow, SlotRow } from './sqlite-rows.js';
import type { IntentState } from './store.js';

type Db = BetterSqlite3.Database;

const OPEN = `state IN ('pending', 'submitted')`;
const COMPACTABLE = `state IN ('succeeded', 'duplicate', 'rejected')`;

/** A prepared statement that reads rows. */
export type Query<P extends unknown[], R> = {
  get(...params: P): R | undefined;
  all(...params: P): R[];
};

/** A prepared statement that changes rows. */
export type Command<P extends unknown[]> = { run(...params: P): { readonly changes: number } };

function query<P extends unknown[], R>(db: Db, sql: string): Query<P, R> {
  return db.prepare<P, R>(sql);
}

function command<P extends unknown[]>(db: Db, sql: string): Command<P> {
  return db.prepare<P>(sql);
}

/** The SQLite store's prepared statements on the tables of schema version 1. */
export type SqliteStatements = ReturnType<typeof prepareStatements>;
/** Those on schema version 2's columns and index, prepared at first use (see SqliteStore). */
export type SqliteStatementsV2 = ReturnType<typeof prepareStatementsV2>;

export function prepareStatements(db: Db) {
  return {
    getCheckpoint: query<[], { resume_offset: number | null; processed_offset: number | null }>(
      db,
      'SELECT resume_offset, processed_offset FROM checkpoint WHERE id = 1',
    ),
    raiseProcessed: command<[number, number]>(
      db,
      'UPDATE checkpoint SET processed_offset = max(coalesce(processed_offset, ?), ?) WHERE id = 1',
    ),
    setResume: command<[number]>(db, 'UPDATE checkpoint SET resume_offset = ? WHERE id = 1'),
    setCheckpoint: command<[number, number]>(
      db,
      'UPDATE checkpoint SET resume_offset = ?, processed_offset = ? WHERE id = 1',
    ),
    lowestOpenEventOffset: query<[number], { lowest: number | null }>(
      db,
      `SELECT min(justifying_offset) AS lowest FROM intents
       WHERE ${OPEN} AND trigger_kind = 'event' AND justifying_offset > ?`,
    ),
    insertIntent: command<[IntentRow]>(
      db,
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
    getIntent: query<[string], IntentRow>(db, 'SELECT * FROM intents WHERE command_id = ?'),
    openIntents: query<[number], IntentRow>(
      db,
      `SELECT * FROM intents WHERE ${OPEN} ORDER BY justifying_offset, created_at, command_id LIMIT ?`,
    ),
    countByState: query<[], { state: IntentState; n: number }>(
      db,
      'SELECT state, count(*) AS n FROM intents GROUP BY state',
    ),
    updateIntent: command<
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
      db,
      `UPDATE intents SET state = ?, attempts = ?, submission_id = ?, last_error = ?,
         next_attempt_at = ?, completion_offset = ?, completion_update_id = ?, updated_at = ?
       WHERE command_id = ?`,
    ),
    insertDeadLetter: command<
      [{ command_id: string; error: string; event: string | null; at: number }]
    >(
      db,
      `INSERT INTO dead_letters (command_id, error, event, dead_lettered_at)
       SELECT command_id, @error, coalesce(@event, event), @at FROM intents
       WHERE command_id = @command_id
       ON CONFLICT (command_id) DO UPDATE SET error = excluded.error, event = excluded.event,
         dead_lettered_at = excluded.dead_lettered_at`,
    ),
    listDeadLetters: query<[{ rule_id: string | null; limit: number }], DeadLetterRow>(
      db,
      `SELECT i.*, d.error AS dl_error, d.event AS dl_event, d.dead_lettered_at
       FROM dead_letters d JOIN intents i USING (command_id)
       WHERE @rule_id IS NULL OR i.rule_id = @rule_id
       ORDER BY d.dead_lettered_at, d.command_id LIMIT @limit`,
    ),
    getDeadLetter: query<[string], DeadLetterRow>(
      db,
      `SELECT i.*, d.error AS dl_error, d.event AS dl_event, d.dead_lettered_at
       FROM dead_letters d JOIN intents i USING (command_id) WHERE d.command_id = ?`,
    ),
    requeue: command<[number, number | null, number, string]>(
      db,
      `UPDATE intents SET state = 'pending', attempts = 0, next_attempt_at = ?, deadline = ?,
         updated_at = ? WHERE command_id = ?`,
    ),
    deleteDeadLetter: command<[string]>(db, 'DELETE FROM dead_letters WHERE command_id = ?'),
    deleteIntent: command<[string]>(db, 'DELETE FROM intents WHERE command_id = ?'),
    getSlot: query<[string], SlotRow>(db, 'SELECT * FROM schedule_slots WHERE rule_id = ?'),
    listSlots: query<[], SlotRow>(db, 'SELECT * FROM schedule_slots ORDER BY rule_id'),
    beginSlot: command<
      [{ rule_id: string; slot: number; since: number; snapshot_offset: number | null }]
    >(
      db,
      `INSERT INTO schedule_slots (rule_id, in_progress_slot, in_progress_since, snapshot_offset)
       VALUES (@rule_id, @slot, @since, @snapshot_offset)
       ON CONFLICT (rule_id) DO UPDATE SET in_progress_slot = @slot, in_progress_since = @since,
         snapshot_offset = @snapshot_offset`,
    ),
    completeSlot: command<[{ rule_id: string; slot: number }]>(
      db,
      `INSERT INTO schedule_slots (rule_id, last_completed_slot) VALUES (@rule_id, @slot)
       ON CONFLICT (rule_id) DO UPDATE SET
         last_completed_slot = max(coalesce(last_completed_slot, @slot), @slot),
         in_progress_slot = CASE WHEN in_progress_slot <= @slot THEN NULL ELSE in_progress_slot END,
         in_progress_since = CASE WHEN in_progress_slot <= @slot THEN NULL ELSE in_progress_since END,
         snapshot_offset = CASE WHEN in_progress_slot <= @slot THEN NULL ELSE snapshot_offset END`,
    ),
    compact: command<[{ cutoff: number; resume: number }]>(
      db,
      `DELETE FROM intents WHERE ${COMPACTABLE} AND updated_at < @cutoff
         AND (trigger_kind = 'slot' OR justifying_offset <= @resume)`,
    ),
  };
}

export function prepareStatementsV2(db: Db) {
  return {
    markInDoubt: command<[string]>(db, 'UPDATE intents SET in_doubt = 1 WHERE command_id = ?'),
    eventIntent: query<[number, number, string], { one: number }>(
      db,
      `SELECT 1 AS one FROM intents
       WHERE justifying_offset = ? AND trigger_node_id = ? AND trigger_kind = 'event'
         AND trigger_update_id IS NOT NULL AND rule_id = ? LIMIT 1`,
    ),
  };
}
