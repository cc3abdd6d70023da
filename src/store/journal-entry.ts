import { changedIntentRow } from './intent-row-change.js';
import { inDoubtOf, newIntentRow, toJson, triggerOf } from './sqlite-rows.js';
import type { DeadLetterRow, IntentRow } from './sqlite-rows.js';
import {
  isTerminal,
  type DeadLetter,
  type IntentChange,
  type IntentRecord,
  type IntentState,
  type NewIntent,
} from './store.js';
import { deepFreeze } from '../core/deep-freeze.js';

/** A dead letter as the journal keeps it: the JSON texts it writes, the value it hands out. */
export type DeadLetterEntry = {
  readonly errorText: string;
  readonly eventText: string | null;
  readonly at: number;
  readonly value: DeadLetter;
};

/**
 * One intent as the SQLite store keeps it in memory: the row it writes (JSON as text, computed
 * once, when the change was made) and the frozen record it hands out, which share nothing a
 * caller could change. Entries are replaced, never changed, so an undo can put the old one back;
 * only `factsPending` is set once the entry's first log row is committed.
 */
export type JournalEntry = {
  readonly row: IntentRow & { in_doubt: number };
  readonly record: IntentRecord;
  /** Set while the state is `dead-lettered`. */
  readonly deadLetter: DeadLetterEntry | undefined;
  /** The intent's state in the `intents` table (the folded form); undefined without a row there. */
  readonly base: IntentState | undefined;
  /** `dead_letters` has a row for it. */
  readonly baseDeadLetter: boolean;
  /** Purged: gone, but the folded form still has it until the next fold. */
  readonly deleted: boolean;
  /** Its facts (payload, trigger, …) are in neither the log nor the table yet. */
  factsPending: boolean;
};

export function isOpenEntry(e: JournalEntry): boolean {
  return !e.deleted && !isTerminal(e.row.state);
}

/** Holds the checkpoint: an open intent with a ledger event (or contract) trigger. */
export function holdsCheckpoint(e: JournalEntry): boolean {
  return isOpenEntry(e) && e.row.trigger_kind === 'event';
}

/** The entry of a newly recorded intent. Throws STORE_NOT_JSON before anything changes. */
export function newEntry(intent: NewIntent, now: number, replaces?: JournalEntry): JournalEntry {
  const row = { ...newIntentRow(intent, now), in_doubt: 0 };
  // The payload as a reopened store returns it: JSON round-trips it.
  const record = recordOf(row, factsOf(row), undefined);
  return {
    row,
    record,
    deadLetter: undefined,
    base: replaces?.base,
    baseDeadLetter: replaces?.baseDeadLetter ?? false,
    deleted: false,
    factsPending: true,
  };
}

/** The entry after `change` at `now`; IllegalStateError or STORE_NOT_JSON leave nothing changed. */
export function changedEntry(e: JournalEntry, change: IntentChange, now: number): JournalEntry {
  // The current row always has in_doubt, so the changed one has it too.
  const row = changedIntentRow(e.row, change, now) as JournalEntry['row'];
  const lastError =
    row.last_error === e.row.last_error ? e.record.lastError : parseFrozen(row.last_error);
  const record = recordOf(row, e.record, lastError);
  let deadLetter: DeadLetterEntry | undefined;
  if (change.to === 'dead-lettered') {
    const eventText = change.event === undefined ? e.row.event : toJson(change.event, 'event');
    deadLetter = deadLetterEntry(record, row.last_error!, eventText, now, lastError);
  }
  return { ...e, row, record, deadLetter };
}

/** An operator's requeue of a dead letter: pending again, attempts reset. */
export function requeuedEntry(e: JournalEntry, now: number, deadline?: number): JournalEntry {
  const row = {
    ...e.row,
    state: 'pending' as const,
    attempts: 0,
    next_attempt_at: now,
    deadline: deadline ?? null,
    updated_at: now,
  };
  return { ...e, row, record: recordOf(row, e.record, e.record.lastError), deadLetter: undefined };
}

export function purgedEntry(e: JournalEntry): JournalEntry {
  return { ...e, deleted: true, deadLetter: undefined };
}

/** An entry read from the folded form (or rebuilt from the log): parses its JSON, once. */
export function entryOfRow(
  row: IntentRow,
  base: IntentState | undefined,
  dead: Pick<DeadLetterRow, 'dl_error' | 'dl_event' | 'dead_lettered_at'> | undefined,
): JournalEntry {
  const full = { ...row, in_doubt: inDoubtOf(row) ? 1 : 0 };
  const record = recordOf(full, factsOf(full), parseFrozen(full.last_error));
  const deadLetter =
    dead === undefined || row.state !== 'dead-lettered'
      ? undefined
      : deadLetterEntry(
          record,
          dead.dl_error,
          dead.dl_event,
          dead.dead_lettered_at,
          parseFrozen(dead.dl_error),
        );
  return {
    row: full,
    record,
    deadLetter,
    base,
    baseDeadLetter: base === 'dead-lettered',
    deleted: false,
    factsPending: false,
  };
}

function deadLetterEntry(
  record: IntentRecord,
  errorText: string,
  eventText: string | null,
  at: number,
  error: unknown,
): DeadLetterEntry {
  const value: DeadLetter = Object.freeze({
    intent: record,
    error,
    ...(eventText === null ? {} : { event: parseFrozen(eventText) }),
    deadLetteredAt: at,
  });
  return { errorText, eventText, at, value };
}

type Facts = Pick<IntentRecord, 'actAs' | 'trigger' | 'payload'>;

/** The parsed facts of `row`, frozen: the parts of its record that never change. */
function factsOf(row: IntentRow): Facts {
  return {
    actAs: Object.freeze(JSON.parse(row.act_as) as string[]),
    trigger: Object.freeze(triggerOf(row)),
    payload: deepFreeze(JSON.parse(row.payload) as unknown),
  };
}

/** The record of `row`, with the parsed values that did not change taken from `facts`. */
function recordOf(row: IntentRow, facts: Facts, lastError: unknown): IntentRecord {
  const r: { -readonly [K in keyof IntentRecord]: IntentRecord[K] } = {
    commandId: row.command_id,
    userId: row.user_id,
    actAs: facts.actAs,
    ruleId: row.rule_id,
    revision: row.revision,
    actionIndex: row.action_index,
    trigger: facts.trigger,
    offset: row.justifying_offset,
    payload: facts.payload,
    state: row.state,
    attempts: row.attempts,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.submission_id !== null) r.submissionId = row.submission_id;
  if (row.last_error !== null) r.lastError = lastError;
  if (row.next_attempt_at !== null) r.nextAttemptAt = row.next_attempt_at;
  if (row.deadline !== null) r.deadline = row.deadline;
  if (row.completion_offset !== null) r.completionOffset = row.completion_offset;
  if (row.completion_update_id !== null) r.completionUpdateId = row.completion_update_id;
  if (row.in_doubt === 1) r.inDoubt = true;
  return Object.freeze(r);
}

/**
 * A parsed JSON value, frozen: records are shared by every reader of the journal, so a caller
 * that changed one would change what the others see (the text the journal writes is apart).
 */
function parseFrozen(text: string | null): unknown {
  return text === null ? undefined : deepFreeze(JSON.parse(text) as unknown);
}
