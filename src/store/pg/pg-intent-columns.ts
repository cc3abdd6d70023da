import { INTENT_COLUMNS, MUTABLE_INTENT_COLUMNS, NEWER_INTENT_COLUMNS } from '../intent-columns.js';
import type { JournalEntry } from '../journal-entry.js';
import { entryOfRow } from '../journal-entry.js';
import type { IntentRow } from '../sqlite-rows.js';

/** A row of `lb_intents` as the store reads it (bigint parsed to number, see `pgTypes`). */
export type PgIntentRow = IntentRow & {
  in_doubt: number;
  attempt_log: string | null;
  dl_error: string | null;
  dl_event: string | null;
  dead_lettered_at: number | null;
};

/**
 * The columns of `lb_intents` with their PostgreSQL types, in the order the writer sends them:
 * the intent's columns, then its dead letter's (PostgreSQL keeps it in the same row).
 */
export const PG_INTENT_COLUMNS = [
  ...INTENT_COLUMNS,
  ...NEWER_INTENT_COLUMNS,
  ['dl_error', 'text'],
  ['dl_event', 'text'],
  ['dead_lettered_at', 'bigint'],
] as const;

export type PgIntentColumn = (typeof PG_INTENT_COLUMNS)[number][0];

/** What a state change may change: the rest (the facts) is written once, with the intent. */
export const PG_MUTABLE_COLUMNS: ReadonlySet<PgIntentColumn> = new Set<PgIntentColumn>([
  ...MUTABLE_INTENT_COLUMNS,
  ...NEWER_INTENT_COLUMNS.map(([c]) => c),
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
