import type BetterSqlite3 from 'better-sqlite3';
import { attemptsOf, packAttempts } from './attempt-log.js';
import { intentValues } from './intent-log.js';
import { entryOfRow, type JournalEntry } from './journal-entry.js';
import type { JournalMemory } from './journal-memory.js';
import { byJustifyingOffset } from './journal-reads.js';
import type { JournalContents, JournalIntentRow } from './journal-transfer.js';
import {
  newIntentRow,
  toIntent,
  toJson,
  type DeadLetterRow,
  type IntentRow,
} from './sqlite-rows.js';
import type { SchemaParts, SqliteStatements } from './sqlite-statements.js';
import type { SlotRecord } from './store.js';
import { StoreError } from './store-error.js';

type Db = BetterSqlite3.Database;

/** A folded intent with its dead-letter columns, null when it has none. */
export type FoldedRow = IntentRow & {
  dl_error: string | null;
  dl_event: string | null;
  dead_lettered_at: number | null;
};

/** The SQLite journal as it stands: memory over the folded rows (call it inside a read). */
export function readSqliteJournal(
  db: Db,
  mem: JournalMemory,
  checkpoint: { readonly resume: number | null; readonly processed: number | null },
  slots: readonly SlotRecord[],
): JournalContents {
  const intents: JournalIntentRow[] = [];
  for (const e of mem.values()) if (!e.deleted) intents.push(rowOfEntry(e));
  const folded = db.prepare<[], FoldedRow>(
    `SELECT i.*, d.error AS dl_error, d.event AS dl_event, d.dead_lettered_at
     FROM intents i LEFT JOIN dead_letters d USING (command_id)`,
  );
  for (const row of folded.iterate()) {
    if (!mem.has(row.command_id)) intents.push(rowOfFolded(row));
  }
  intents.sort((a, b) => byJustifyingOffset(a.intent, b.intent));
  return {
    ...(checkpoint.resume === null ? {} : { checkpoint: checkpoint.resume }),
    ...(checkpoint.processed === null ? {} : { processedOffset: checkpoint.processed }),
    intents,
    slots,
  };
}

/**
 * Writes `journal` as folded rows, the checkpoint and the slots, in one transaction, into a
 * store whose tables hold nothing (the caller commits its memory first, and reloads it after).
 */
export function writeSqliteJournal(
  db: Db,
  s: SqliteStatements,
  parts: SchemaParts,
  path: string,
  journal: JournalContents,
): void {
  const seen = new Set<string>();
  for (const r of journal.intents) {
    if (seen.has(r.intent.commandId)) {
      throw new StoreError(
        'STORE_BAD_ARGUMENT',
        `the journal to import names intent ${r.intent.commandId} twice`,
      );
    }
    seen.add(r.intent.commandId);
  }
  db.transaction(() => {
    if (!tablesEmpty(db, parts)) {
      throw new StoreError(
        'STORE_NOT_EMPTY',
        `the state store ${path} already holds a journal: import only into an empty state directory`,
      );
    }
    for (const r of journal.intents) {
      const row = rowOf(r);
      s.upsertIntent.run(...intentValues(entryOfRow(row, row.state, undefined), parts));
      const dead = r.deadLetter;
      if (dead !== undefined) {
        s.upsertDeadLetter.run(
          row.command_id,
          toJson(dead.error, `dead-letter error of ${row.command_id}`),
          dead.event === undefined ? null : toJson(dead.event, 'event'),
          dead.deadLetteredAt,
        );
      }
    }
    for (const slot of journal.slots) {
      s.upsertSlot.run(
        slot.ruleId,
        slot.lastCompletedSlot ?? null,
        slot.inProgressSlot ?? null,
        slot.inProgressSince ?? null,
        slot.snapshotOffset ?? null,
      );
    }
    s.setCheckpoint.run(journal.checkpoint ?? null, journal.processedOffset ?? null);
  }).immediate();
}

function tablesEmpty(db: Db, parts: SchemaParts): boolean {
  const count = (table: string): number =>
    db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM ${table}`).get()?.n ?? 0;
  const checkpoint = db
    .prepare<[], { n: number }>(
      'SELECT count(*) AS n FROM checkpoint WHERE resume_offset IS NOT NULL OR processed_offset IS NOT NULL',
    )
    .get();
  return (
    count('intents') === 0 &&
    count('dead_letters') === 0 &&
    count('schedule_slots') === 0 &&
    (!parts.log || count('intent_log') === 0) &&
    (checkpoint?.n ?? 0) === 0
  );
}

function rowOfEntry(e: JournalEntry): JournalIntentRow {
  const dead = e.deadLetter?.value;
  return {
    intent: e.record,
    ...(e.row.event === null ? {} : { event: JSON.parse(e.row.event) as unknown }),
    attemptLog: attemptsOf(e.row.attempt_log),
    ...(dead === undefined
      ? {}
      : {
          deadLetter: {
            error: dead.error,
            ...(dead.event === undefined ? {} : { event: dead.event }),
            deadLetteredAt: dead.deadLetteredAt,
          },
        }),
  };
}

export function rowOfFolded(row: FoldedRow): JournalIntentRow {
  return {
    intent: toIntent(row),
    ...(row.event === null ? {} : { event: JSON.parse(row.event) as unknown }),
    attemptLog: attemptsOf(row.attempt_log),
    ...(row.dl_error === null || row.dead_lettered_at === null
      ? {}
      : {
          deadLetter: deadLetterOf({
            dl_error: row.dl_error,
            dl_event: row.dl_event,
            dead_lettered_at: row.dead_lettered_at,
          }),
        }),
  };
}

function deadLetterOf(row: Pick<DeadLetterRow, 'dl_error' | 'dl_event' | 'dead_lettered_at'>) {
  return {
    error: JSON.parse(row.dl_error) as unknown,
    ...(row.dl_event === null ? {} : { event: JSON.parse(row.dl_event) as unknown }),
    deadLetteredAt: row.dead_lettered_at,
  };
}

/** The `intents` row of an exported intent. */
export function rowOf(r: JournalIntentRow): IntentRow & { in_doubt: number } {
  const i = r.intent;
  const facts = newIntentRow(
    {
      commandId: i.commandId,
      userId: i.userId,
      actAs: i.actAs,
      ruleId: i.ruleId,
      revision: i.revision,
      actionIndex: i.actionIndex,
      trigger: i.trigger,
      offset: i.offset,
      payload: i.payload,
      ...(r.event === undefined ? {} : { event: r.event }),
    },
    i.createdAt,
  );
  return {
    ...facts,
    state: i.state,
    attempts: i.attempts,
    submission_id: i.submissionId ?? null,
    last_error: i.lastError === undefined ? null : toJson(i.lastError, `error of ${i.commandId}`),
    next_attempt_at: i.nextAttemptAt ?? null,
    deadline: i.deadline ?? null,
    updated_at: i.updatedAt,
    completion_offset: i.completionOffset ?? null,
    completion_update_id: i.completionUpdateId ?? null,
    in_doubt: i.inDoubt === true ? 1 : 0,
    attempt_log: packAttempts(r.attemptLog),
  };
}
