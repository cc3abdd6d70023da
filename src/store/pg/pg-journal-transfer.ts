import type pg from 'pg';
import { entryOfRow, type JournalEntry } from '../journal-entry.js';
import type { JournalContents, JournalIntentRow } from '../journal-transfer.js';
import { toJson, toSlot, type SlotRow } from '../sqlite-rows.js';
import { rowOf, rowOfFolded } from '../sqlite-journal-transfer.js';
import { StoreError } from '../store-error.js';
import type { PgIntentRow } from './pg-intent-columns.js';
import type { PgJournalWriter } from './pg-journal-writer.js';
import { quoteIdentifier } from './quote-identifier.js';

/**
 * The whole journal of `owner` in `schema`, read in one snapshot (a read-only repeatable-read
 * transaction): consistent while a bot commits meanwhile. Intents oldest justifying offset first.
 */
export async function exportPgJournal(
  pool: pg.Pool,
  schema: string,
  owner: string,
): Promise<JournalContents> {
  const s = quoteIdentifier(schema);
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const cp = await client.query<{
      resume_offset: number | null;
      processed_offset: number | null;
    }>(
      // A fleet's schema keeps a checkpoint per rule (`rule:<id>`) and none of its own: the
      // export then resumes from the earliest of them. A restore replays from there what some
      // rules had handled already; their intents are in the journal under the same commandIds,
      // so nothing is submitted twice, and no rule's events are skipped.
      `SELECT resume_offset, processed_offset FROM ${s}.lb_checkpoints WHERE owner = $1
       UNION ALL
       SELECT min(resume_offset), min(processed_offset) FROM ${s}.lb_checkpoints
        WHERE owner LIKE 'rule:%' AND NOT EXISTS (SELECT 1 FROM ${s}.lb_checkpoints WHERE owner = $1)
       HAVING count(*) > 0`,
      [owner],
    );
    const intents = await client.query<PgIntentRow>(
      `SELECT * FROM ${s}.lb_intents ORDER BY justifying_offset, created_at, command_id`,
    );
    const slots = await client.query<SlotRow>(
      `SELECT * FROM ${s}.lb_schedule_slots ORDER BY rule_id`,
    );
    await client.query('COMMIT');
    const resume = cp.rows[0]?.resume_offset ?? null;
    const processed = cp.rows[0]?.processed_offset ?? null;
    return {
      ...(resume === null ? {} : { checkpoint: resume }),
      ...(processed === null ? {} : { processedOffset: processed }),
      intents: intents.rows.map((row) => rowOfFolded(row)),
      slots: slots.rows.map(toSlot),
    };
  } finally {
    client.release();
  }
}

/**
 * Writes `journal` into an empty schema (no intent, no slot record, no checkpoint of `owner`)
 * in one transaction, as one group commit: all of it or nothing. STORE_NOT_EMPTY otherwise,
 * STORE_BAD_ARGUMENT for an intent named twice.
 */
export async function importPgJournal(
  pool: pg.Pool,
  writer: PgJournalWriter,
  target: { readonly schema: string; readonly owner: string; readonly where: string },
  journal: JournalContents,
): Promise<void> {
  const seen = new Set<string>();
  const entries: JournalEntry[] = [];
  for (const r of journal.intents) {
    if (seen.has(r.intent.commandId)) {
      throw new StoreError(
        'STORE_BAD_ARGUMENT',
        `the journal to import names intent ${r.intent.commandId} twice`,
      );
    }
    seen.add(r.intent.commandId);
    entries.push(entryOf(r));
  }
  const s = quoteIdentifier(target.schema);
  const client = await pool.connect();
  let failed = false;
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM ${s}.lb_intents) + (SELECT count(*) FROM ${s}.lb_schedule_slots)
            + (SELECT count(*) FROM ${s}.lb_checkpoints WHERE owner = $1) AS n`,
      [target.owner],
    );
    if ((rows[0]?.n ?? 0) > 0) {
      throw new StoreError(
        'STORE_NOT_EMPTY',
        `the PostgreSQL state store at ${target.where} already holds a journal: import only into an empty schema`,
      );
    }
    await client.query(
      writer.statement({
        inserts: entries,
        updates: [],
        deletes: [],
        slots: journal.slots,
        checkpoint: {
          resume: journal.checkpoint ?? null,
          processed: journal.processedOffset ?? null,
        },
        holds: [],
      }),
    );
    await client.query('COMMIT');
  } catch (err) {
    failed = true;
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release(failed);
  }
}

/** The entry of an exported intent, with its dead letter. */
function entryOf(r: JournalIntentRow): JournalEntry {
  const row = rowOf(r);
  const dead = r.deadLetter;
  return entryOfRow(
    row,
    undefined,
    dead === undefined
      ? undefined
      : {
          dl_error: toJson(dead.error, `dead-letter error of ${row.command_id}`),
          dl_event: dead.event === undefined ? null : toJson(dead.event, 'event'),
          dead_lettered_at: dead.deadLetteredAt,
        },
  );
}
