import { LedgerbotError } from '../core/ledgerbot-error.js';
import type { JournalContents, JournalIntentRow, RuleCheckpoint } from './journal-transfer.js';
import type { SlotRecord } from './store.js';

/*
 * The journal as JSON Lines (`ledgerbot state export|import`): a header line, then one line per
 * intent (oldest justifying offset first), then one per schedule slot record. Store-neutral: the
 * lines carry the records as the `Store` interface hands them out, not any store's columns.
 * Written here; read back, line by line checked, by `parseJournalLines` (read-journal-lines.ts).
 */

export const JOURNAL_FORMAT = 'ledgerbot-journal';
export const JOURNAL_FORMAT_VERSION = 1;

export type JournalHeader = {
  readonly format: typeof JOURNAL_FORMAT;
  readonly version: typeof JOURNAL_FORMAT_VERSION;
  /** ISO 8601. */
  readonly exportedAt: string;
  readonly checkpoint: number | null;
  readonly processedOffset: number | null;
  /** A fleet's checkpoint per rule (JournalContents.ruleCheckpoints); absent for a single bot. */
  readonly ruleCheckpoints?: readonly RuleCheckpoint[];
  /** How many intent lines and slot lines follow: a file cut at a line's end is refused. */
  readonly intents: number;
  readonly slots: number;
};

/** What a reader refuses before it parses: see `parseJournalLines`. */
export type JournalLineLimits = {
  /** Bytes of the whole file. */
  readonly maxFileBytes: number;
  /** Bytes of one line. */
  readonly maxLineBytes: number;
  /** Nesting of arrays and objects in one line (the line's own object is 1). */
  readonly maxDepth: number;
};

/**
 * A payload is a submission's commands (arguments nest a record per level), so 16 MiB and 256
 * levels are far above a real line (and the export refuses to write a line the import would
 * refuse); the file bound keeps an import within memory.
 */
export const JOURNAL_LINE_LIMITS: JournalLineLimits = {
  maxFileBytes: 1024 * 1024 * 1024,
  maxLineBytes: 16 * 1024 * 1024,
  maxDepth: 256,
};

/** A file that is not an export of this format and version, or not all of one. */
export class JournalFormatError extends LedgerbotError<'JOURNAL_BAD_FORMAT'> {}

/**
 * The lines of `journal`, each ending in a newline: the header first. Throws JournalFormatError
 * for an intent whose line the import would refuse (longer or deeper than `limits`).
 */
export function* journalLines(
  journal: JournalContents,
  exportedAt: number,
  limits: JournalLineLimits = JOURNAL_LINE_LIMITS,
): Generator<string> {
  const header: JournalHeader = {
    format: JOURNAL_FORMAT,
    version: JOURNAL_FORMAT_VERSION,
    exportedAt: new Date(exportedAt).toISOString(),
    checkpoint: journal.checkpoint ?? null,
    processedOffset: journal.processedOffset ?? null,
    ...(journal.ruleCheckpoints === undefined ? {} : { ruleCheckpoints: journal.ruleCheckpoints }),
    intents: journal.intents.length,
    slots: journal.slots.length,
  };
  yield `${JSON.stringify(header)}\n`;
  for (const row of journal.intents) {
    const line = intentLine(row);
    const text = depthOver(line, limits.maxDepth) ? undefined : JSON.stringify(line);
    if (text === undefined || Buffer.byteLength(text) > limits.maxLineBytes) {
      throw new JournalFormatError(
        'JOURNAL_BAD_FORMAT',
        `intent ${row.intent.commandId} cannot be exported: its line would be ${text === undefined ? `deeper than ${limits.maxDepth} levels` : `longer than ${limits.maxLineBytes} bytes`}, which an import refuses`,
      );
    }
    yield `${text}\n`;
  }
  for (const slot of journal.slots)
    yield `${JSON.stringify({ kind: 'slot', slot: slotOf(slot) })}\n`;
}

/**
 * An intent's line with its fields in one order, whichever way the store built the record (a
 * store may hand out the records it keeps in memory and those it reads with keys in another
 * order): the same journal always exports to the same bytes.
 */
function intentLine(row: JournalIntentRow): Record<string, unknown> {
  const i = row.intent;
  const dead = row.deadLetter;
  return {
    kind: 'intent',
    intent: {
      commandId: i.commandId,
      userId: i.userId,
      actAs: i.actAs,
      ruleId: i.ruleId,
      revision: i.revision,
      actionIndex: i.actionIndex,
      trigger: i.trigger,
      offset: i.offset,
      payload: i.payload,
      state: i.state,
      attempts: i.attempts,
      submissionId: i.submissionId,
      lastError: i.lastError,
      nextAttemptAt: i.nextAttemptAt,
      deadline: i.deadline,
      createdAt: i.createdAt,
      updatedAt: i.updatedAt,
      completionOffset: i.completionOffset,
      completionUpdateId: i.completionUpdateId,
      inDoubt: i.inDoubt,
    },
    event: row.event,
    attemptLog: row.attemptLog.map((a) => ({
      n: a.n,
      submissionId: a.submissionId,
      at: a.at,
      outcome: a.outcome,
      error: a.error === undefined ? undefined : { code: a.error.code, message: a.error.message },
    })),
    deadLetter:
      dead === undefined
        ? undefined
        : { error: dead.error, event: dead.event, deadLetteredAt: dead.deadLetteredAt },
  };
}

function slotOf(s: SlotRecord): SlotRecord {
  return {
    ruleId: s.ruleId,
    ...(s.lastCompletedSlot === undefined ? {} : { lastCompletedSlot: s.lastCompletedSlot }),
    ...(s.inProgressSlot === undefined ? {} : { inProgressSlot: s.inProgressSlot }),
    ...(s.inProgressSince === undefined ? {} : { inProgressSince: s.inProgressSince }),
    ...(s.snapshotOffset === undefined ? {} : { snapshotOffset: s.snapshotOffset }),
  };
}

/** Whether `value` nests arrays and objects more than `max` deep (a walk with a stack). */
export function depthOver(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}
