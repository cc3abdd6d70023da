import type pg from 'pg';
import type { JournalEntry } from '../journal-entry.js';
import { toSlot, type SlotRow } from '../sqlite-rows.js';
import type { SlotRecord } from '../store.js';
import { StoreError } from '../store-error.js';
import { entryOfPgRow, type PgIntentRow } from './pg-intent-columns.js';
import { quoteIdentifier } from './quote-identifier.js';

/** What the PostgreSQL store loads into memory at open. */
export type PgJournalLoad = {
  readonly resume: number | null;
  readonly processed: number | null;
  readonly slots: SlotRecord[];
  readonly entries: JournalEntry[];
};

/**
 * Reads `owner`'s checkpoint, the slots, and the intents memory must hold (see PgStore): open
 * intents, dead letters, event intents above the checkpoint, slot intents of slots not completed.
 * Throws STORE_CORRUPT, naming the intent, for a row it cannot read.
 */
export async function loadPgJournal(
  pool: pg.Pool,
  schema: string,
  owner: string,
  where: string,
): Promise<PgJournalLoad> {
  const s = quoteIdentifier(schema);
  const cp = await pool.query<{ resume_offset: number | null; processed_offset: number | null }>(
    `SELECT resume_offset, processed_offset FROM ${s}.lb_checkpoints WHERE owner = $1`,
    [owner],
  );
  const resume = cp.rows[0]?.resume_offset ?? null;
  const slots = await pool.query<SlotRow>(`SELECT * FROM ${s}.lb_schedule_slots`);
  const intents = await pool.query<PgIntentRow>(
    `SELECT i.* FROM ${s}.lb_intents i
     WHERE i.state IN ('pending', 'submitted', 'dead-lettered')
        OR (i.trigger_kind = 'event' AND i.justifying_offset > $1)
        OR (i.trigger_kind = 'slot' AND NOT EXISTS (
              SELECT 1 FROM ${s}.lb_schedule_slots sl
              WHERE sl.rule_id = i.rule_id AND sl.last_completed_slot >= i.trigger_slot
                AND sl.in_progress_slot IS DISTINCT FROM i.trigger_slot))`,
    [resume ?? -1],
  );
  const entries = intents.rows.map((row) => {
    try {
      return entryOfPgRow(row);
    } catch (err) {
      throw new StoreError(
        'STORE_CORRUPT',
        `the PostgreSQL state store ${where} has an unreadable intent row (${row.command_id}): ${(err as Error).message}; restore the database from a backup`,
        { cause: err },
      );
    }
  });
  return {
    resume,
    processed: cp.rows[0]?.processed_offset ?? null,
    slots: slots.rows.map(toSlot),
    entries,
  };
}
