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
      owner: string;
      resume_offset: number | null;
      processed_offset: number | null;
    }>(
      // A fleet's schema keeps a checkpoint per rule (`rule:<id>`) and none of its own.
      `SELECT owner, resume_offset, processed_offset FROM ${s}.lb_checkpoints
        WHERE owner = $1 OR owner LIKE 'rule:%' ORDER BY owner`,
      [owner],
    );
    const intents = await client.query<PgIntentRow>(
      `SELECT * FROM ${s}.lb_intents ORDER BY justifying_offset, created_at, command_id`,
    );
    const slots = await client.query<SlotRow>(
      `SELECT * FROM ${s}.lb_schedule_slots ORDER BY rule_id`,
    );
    await client.query('COMMIT');
    const own = cp.rows.find((r) => r.owner === owner);
    const rules = cp.rows
      .filter((r) => r.owner.startsWith('rule:') && r.resume_offset !== null)
      .map((r) => ({
        ruleId: r.owner.slice('rule:'.length),
        checkpoint: Number(r.resume_offset),
        ...(r.processed_offset === null ? {} : { processedOffset: Number(r.processed_offset) }),
      }));
    // Without one of its own (a fleet), the earliest rule's: where a single bot resumes.
    const earliest = (xs: (number | undefined)[]): number | null => {
      const known = xs.filter((x): x is number => x !== undefined);
      return known.length === 0 ? null : Math.min(...known);
    };
    const resume = own !== undefined ? own.resume_offset : earliest(rules.map((r) => r.checkpoint));
    const processed =
      own !== undefined ? own.processed_offset : earliest(rules.map((r) => r.processedOffset));
    return {
      ...(resume === null ? {} : { checkpoint: Number(resume) }),
      ...(processed === null ? {} : { processedOffset: Number(processed) }),
      ...(own === undefined && rules.length > 0 ? { ruleCheckpoints: rules } : {}),
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
            + (SELECT count(*) FROM ${s}.lb_checkpoints WHERE owner = $1 OR owner LIKE 'rule:%') AS n`,
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
    for (const r of journal.ruleCheckpoints ?? []) {
      await client.query(
        `INSERT INTO ${s}.lb_checkpoints (owner, resume_offset, processed_offset) VALUES ($1, $2, $3)`,
        [`rule:${r.ruleId}`, r.checkpoint, r.processedOffset ?? null],
      );
    }
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
