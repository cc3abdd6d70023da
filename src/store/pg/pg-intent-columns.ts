import type { JournalEntry } from '../journal-entry.js';
import { entryOfRow } from '../journal-entry.js';
import type { IntentRow } from '../sqlite-rows.js';

/** A row of `lb_intents` as the store reads it (bigint parsed to number, see `PG_TYPES`). */
export type PgIntentRow = IntentRow & {
  in_doubt: number;
  attempt_log: string | null;
  dl_error: string | null;
  dl_event: string | null;
  dead_lettered_at: number | null;
};

/** The columns of `lb_intents` with their PostgreSQL types, in the order the writer sends them. */
export const PG_INTENT_COLUMNS = [
  ['command_id', 'text'],
  ['user_id', 'text'],
  ['act_as', 'text'],
  ['rule_id', 'text'],
  ['revision', 'integer'],
  ['action_index', 'integer'],
  ['trigger_kind', 'text'],
  ['trigger_update_id', 'text'],
  ['trigger_node_id', 'bigint'],
  ['trigger_slot', 'bigint'],
  ['trigger_contract_id', 'text'],
  ['justifying_offset', 'bigint'],
  ['payload', 'text'],
  ['event', 'text'],
  ['state', 'text'],
  ['attempts', 'integer'],
  ['submission_id', 'text'],
  ['last_error', 'text'],
  ['next_attempt_at', 'bigint'],
  ['deadline', 'bigint'],
  ['created_at', 'bigint'],
  ['updated_at', 'bigint'],
  ['completion_offset', 'bigint'],
  ['completion_update_id', 'text'],
  ['in_doubt', 'smallint'],
  ['attempt_log', 'text'],
  ['dl_error', 'text'],
  ['dl_event', 'text'],
  ['dead_lettered_at', 'bigint'],
] as const;

export type PgIntentColumn = (typeof PG_INTENT_COLUMNS)[number][0];

/** What a state change may change: the rest (the facts) is written once, with the intent. */
export const PG_MUTABLE_COLUMNS: ReadonlySet<PgIntentColumn> = new Set<PgIntentColumn>([
  'state',
  'attempts',
  'submission_id',
  'last_error',
  'next_attempt_at',
  'deadline',
  'updated_at',
  'completion_offset',
  'completion_update_id',
  'in_doubt',
  'attempt_log',
  'dl_error',
  'dl_event',
  'dead_lettered_at',
]);

/** The value of `column` for the row of `e`. */
export function pgColumnValue(e: JournalEntry, column: PgIntentColumn): unknown {
  const dead = e.deadLetter;
  switch (column) {
    case 'dl_error':
      return dead?.errorText ?? null;
    case 'dl_event':
      return dead?.eventText ?? null;
    case 'dead_lettered_at':
      return dead?.at ?? null;
    case 'attempt_log':
      return e.row.attempt_log ?? null;
    default:
      return e.row[column];
  }
}

/**
 * The journal entry of a row read from `lb_intents`. No `base`: that is the SQLite store's
 * folded form, which memory corrects its counts by; PostgreSQL's memory counts itself alone.
 */
export function entryOfPgRow(row: PgIntentRow): JournalEntry {
  const dead =
    row.state === 'dead-lettered' && row.dl_error !== null
      ? {
          dl_error: row.dl_error,
          dl_event: row.dl_event,
          dead_lettered_at: row.dead_lettered_at ?? 0,
        }
      : undefined;
  return entryOfRow(row, undefined, dead);
}
