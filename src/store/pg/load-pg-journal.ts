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

/** The checkpoint row of one rule of a fleet (`rules`): prefixed, so no rule id is 'default'. */
export function ruleCheckpointOwner(ruleId: string): string {
  return `rule:${ruleId}`;
}

/**
 * Reads `owner`'s checkpoint, the slots, and the intents memory must hold (see PgStore): open
 * intents, dead letters, event intents above the checkpoint, slot intents of slots not completed.
 * With `rules` (a fleet member's store): only those rules' intents and slots, and the lowest of
 * their checkpoints (`ruleCheckpointOwner` rows; a rule without one takes the 'default' row, if
 * any: it has not run in a fleet yet). Throws
 * STORE_CORRUPT, naming the intent, for a row it cannot read.
 */
export async function loadPgJournal(
  pool: pg.Pool,
  schema: string,
  owner: string,
  where: string,
  rules?: readonly string[],
): Promise<PgJournalLoad> {
  const s = quoteIdentifier(schema);
  const owners = rules === undefined ? [owner] : rules.map(ruleCheckpointOwner);
  // A fleet's rule without a row of its own takes the single bot's ('default'): a fleet that
  // follows one bot on the same schema goes on from where that bot was.
  const cp = await pool.query<{ resume_offset: number | null; processed_offset: number | null }>(
    `SELECT min(coalesce(r.resume_offset, d.resume_offset)) AS resume_offset,
            min(coalesce(r.processed_offset, d.processed_offset)) AS processed_offset
       FROM unnest($1::text[]) AS o(owner)
       LEFT JOIN ${s}.lb_checkpoints r ON r.owner = o.owner
       LEFT JOIN ${s}.lb_checkpoints d ON d.owner = 'default' AND $2`,
    [owners, rules !== undefined],
  );
  const resume = cp.rows[0]?.resume_offset ?? null;
  // Every rule's, unless a fleet member's store names its own.
  const mine = rules === undefined ? 'TRUE' : 'rule_id = ANY($1::text[])';
  const slots = await pool.query<SlotRow>(
    `SELECT * FROM ${s}.lb_schedule_slots WHERE ${mine}`,
    rules === undefined ? [] : [rules],
  );
  const intents = await pool.query<PgIntentRow>(
    `SELECT i.* FROM ${s}.lb_intents i
     WHERE (${rules === undefined ? '$1::text[] IS NULL' : 'i.rule_id = ANY($1::text[])'})
       AND (i.state IN ('pending', 'submitted', 'dead-lettered')
        OR (i.trigger_kind = 'event' AND i.justifying_offset > $2)
        OR (i.trigger_kind = 'slot' AND NOT EXISTS (
              SELECT 1 FROM ${s}.lb_schedule_slots sl
              WHERE sl.rule_id = i.rule_id AND sl.last_completed_slot >= i.trigger_slot
                AND sl.in_progress_slot IS DISTINCT FROM i.trigger_slot)))`,
    [rules ?? null, resume ?? -1],
  );
  const entries = intents.rows.map((row) => readPgRow(row, where));
  return {
    resume,
    processed: cp.rows[0]?.processed_offset ?? null,
    slots: slots.rows.map(toSlot),
    entries,
  };
}

/** The row's entry; throws STORE_CORRUPT, naming the intent, for a row it cannot read. */
export function readPgRow(row: PgIntentRow, where: string): JournalEntry {
  try {
    return entryOfPgRow(row);
  } catch (err) {
    throw new StoreError(
      'STORE_CORRUPT',
      `the PostgreSQL state store ${where} has an unreadable intent row (${row.command_id}): ${(err as Error).message}; restore the database from a backup`,
      { cause: err },
    );
  }
}
