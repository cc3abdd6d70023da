import type BetterSqlite3 from 'better-sqlite3';
import {
  INTENT_COLUMN_NAMES,
  INTENT_FACT_COLUMNS,
  MUTABLE_INTENT_COLUMNS,
} from './intent-columns.js';
import type { DeadLetterRow, IntentRow, SlotRow } from './sqlite-rows.js';
import type { IntentState } from './store.js';

type Db = BetterSqlite3.Database;

const OPEN = `state IN ('pending', 'submitted')`;
const COMPACTABLE = `state IN ('succeeded', 'duplicate', 'rejected')`;

/** A prepared statement that reads rows. */
export type Query<P extends unknown[], R> = {
  get(...params: P): R | undefined;
  all(...params: P): R[];
  iterate(...params: P): IterableIterator<R>;
};

/** A prepared statement that changes rows. */
export type Command<P extends unknown[]> = { run(...params: P): { readonly changes: number } };

function query<P extends unknown[], R>(db: Db, sql: string): Query<P, R> {
  return db.prepare<P, R>(sql);
}

function command<P extends unknown[]>(db: Db, sql: string): Command<P> {
  return db.prepare<P>(sql);
}

/** A row of `intent_log` (schema version 3): the facts only in an intent's first row. */
export type LogRow = Omit<
  IntentRow,
  | 'user_id'
  | 'act_as'
  | 'rule_id'
  | 'revision'
  | 'action_index'
  | 'trigger_kind'
  | 'justifying_offset'
  | 'payload'
  | 'created_at'
  | 'state'
  | 'in_doubt'
> & {
  seq: number;
  state: IntentState | 'purged';
  in_doubt: number;
  dl_error: string | null;
  dl_event: string | null;
  dead_lettered_at: number | null;
  user_id: string | null;
  act_as: string | null;
  rule_id: string | null;
  revision: number | null;
  action_index: number | null;
  trigger_kind: 'event' | 'slot' | null;
  justifying_offset: number | null;
  payload: string | null;
  created_at: number | null;
  /** Since schema version 5. */
  attempt_log?: string | null;
};

/**
 * The columns of a log row, in the order `appendLog` binds them: what changes first, then the
 * facts, which only an intent's first row since the last fold carries.
 */
export const LOG_COLUMNS: readonly string[] = [
  'command_id',
  ...MUTABLE_INTENT_COLUMNS,
  'in_doubt',
  'dl_error',
  'dl_event',
  'dead_lettered_at',
  ...INTENT_FACT_COLUMNS,
];

/** The SQLite store's prepared statements. */
export type SqliteStatements = ReturnType<typeof prepareStatements>;

/** What the file's schema has: older files (the migration tests open some) lack the newer parts. */
export type SchemaParts = {
  readonly inDoubt: boolean;
  readonly log: boolean;
  /** `attempt_log` in `intents` and `intent_log` (schema version 5). */
  readonly attemptLog: boolean;
};

export function schemaParts(db: Db): SchemaParts {
  const columns = db.prepare<[], { name: string }>('PRAGMA table_info(intents)').all();
  const log = db
    .prepare<[], { n: number }>(
      "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'intent_log'",
    )
    .get();
  return {
    inDoubt: columns.some((c) => c.name === 'in_doubt'),
    log: (log?.n ?? 0) > 0,
    attemptLog: columns.some((c) => c.name === 'attempt_log'),
  };
}

export function prepareStatements(db: Db, parts: SchemaParts) {
  const newer = [
    ...(parts.inDoubt ? ['in_doubt'] : []),
    ...(parts.attemptLog ? ['attempt_log'] : []),
  ];
  const intentColumns = [...INTENT_COLUMN_NAMES, ...newer];
  const mutable = [...MUTABLE_INTENT_COLUMNS, ...newer];
  return {
    getCheckpoint: query<[], { resume_offset: number | null; processed_offset: number | null }>(
      db,
      'SELECT resume_offset, processed_offset FROM checkpoint WHERE id = 1',
    ),
    setCheckpoint: command<[number | null, number | null]>(
      db,
      'UPDATE checkpoint SET resume_offset = ?, processed_offset = ? WHERE id = 1',
    ),
    getIntent: query<[string], IntentRow>(db, 'SELECT * FROM intents WHERE command_id = ?'),
    maxEventOffset: query<[], { m: number | null }>(
      db,
      "SELECT max(justifying_offset) AS m FROM intents WHERE trigger_kind = 'event'",
    ),
    openIntents: query<[], IntentRow>(db, `SELECT * FROM intents WHERE ${OPEN}`),
    countByState: query<[], { state: IntentState; n: number }>(
      db,
      'SELECT state, count(*) AS n FROM intents GROUP BY state',
    ),
    eventIntents: query<[number, number, string], { command_id: string }>(
      db,
      `SELECT command_id FROM intents
       WHERE justifying_offset = ? AND trigger_node_id = ? AND trigger_kind = 'event'
         AND trigger_update_id IS NOT NULL AND rule_id = ?`,
    ),
    upsertIntent: command<unknown[]>(
      db,
      `INSERT INTO intents (${intentColumns.join(', ')})
       VALUES (${intentColumns.map(() => '?').join(', ')})
       ON CONFLICT (command_id) DO UPDATE SET
         ${mutable.map((c) => `${c} = excluded.${c}`).join(', ')}`,
    ),
    deleteIntent: command<[string]>(db, 'DELETE FROM intents WHERE command_id = ?'),
    upsertDeadLetter: command<[string, string, string | null, number]>(
      db,
      `INSERT INTO dead_letters (command_id, error, event, dead_lettered_at) VALUES (?, ?, ?, ?)
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
    deleteDeadLetter: command<[string]>(db, 'DELETE FROM dead_letters WHERE command_id = ?'),
    listSlots: query<[], SlotRow>(db, 'SELECT * FROM schedule_slots ORDER BY rule_id'),
    upsertSlot: command<[string, number | null, number | null, number | null, number | null]>(
      db,
      `INSERT INTO schedule_slots (rule_id, last_completed_slot, in_progress_slot,
         in_progress_since, snapshot_offset) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (rule_id) DO UPDATE SET last_completed_slot = excluded.last_completed_slot,
         in_progress_slot = excluded.in_progress_slot,
         in_progress_since = excluded.in_progress_since,
         snapshot_offset = excluded.snapshot_offset`,
    ),
    compact: command<[{ cutoff: number; resume: number }]>(
      db,
      `DELETE FROM intents WHERE ${COMPACTABLE} AND updated_at < @cutoff
         AND (trigger_kind = 'slot' OR justifying_offset <= @resume)`,
    ),
  };
}

/** Statements on `intent_log` (schema version 3) that write: a read-only store has none. */
export type LogStatements = ReturnType<typeof prepareLogStatements>;

export function prepareLogStatements(db: Db, parts: SchemaParts) {
  const columns = parts.attemptLog ? [...LOG_COLUMNS, 'attempt_log'] : LOG_COLUMNS;
  return {
    append: command<unknown[]>(
      db,
      `INSERT INTO intent_log (${columns.join(', ')})
       VALUES (${columns.map(() => '?').join(', ')})`,
    ),
    clear: command<[]>(db, 'DELETE FROM intent_log'),
  };
}

/** The log in the order it was written, for the replay at open. */
export function readLog(db: Db): Query<[], LogRow> {
  return query<[], LogRow>(db, 'SELECT * FROM intent_log ORDER BY seq');
}
