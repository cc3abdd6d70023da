import { INTENT_COLUMN_NAMES, type MutableIntentColumn } from './intent-columns.js';
import { entryOfRow, purgedEntry, type JournalEntry } from './journal-entry.js';
import type { IntentRow } from './sqlite-rows.js';
import { LOG_COLUMNS, type LogRow, type SchemaParts } from './sqlite-statements.js';
import { INTENT_STATES, type IntentState } from './store.js';
import { StoreError } from './store-error.js';

/** The facts close the log row, from `user_id` on. */
const FACT_COLUMN_COUNT = LOG_COLUMNS.length - LOG_COLUMNS.indexOf('user_id');

/**
 * The values of the log row of `e` for `appendLog`, in LOG_COLUMNS order (then `attempt_log` if
 * the file has it); facts only if `withFacts`.
 */
export function logValues(e: JournalEntry, withFacts: boolean, attemptLog: boolean): unknown[] {
  const r = e.row;
  const dead = e.deadLetter;
  const values: unknown[] = [
    r.command_id,
    e.deleted ? 'purged' : r.state,
    r.attempts,
    r.submission_id,
    r.last_error,
    r.next_attempt_at,
    r.deadline,
    r.updated_at,
    r.completion_offset,
    r.completion_update_id,
    r.in_doubt,
    dead?.errorText ?? null,
    dead?.eventText ?? null,
    dead?.at ?? null,
  ];
  if (!withFacts) {
    for (let i = 0; i < FACT_COLUMN_COUNT; i++) values.push(null);
    if (attemptLog) values.push(r.attempt_log ?? null);
    return values;
  }
  values.push(
    r.user_id,
    r.act_as,
    r.rule_id,
    r.revision,
    r.action_index,
    r.trigger_kind,
    r.trigger_update_id,
    r.trigger_node_id,
    r.trigger_slot,
    r.trigger_contract_id,
    r.justifying_offset,
    r.payload,
    r.event,
    r.created_at,
  );
  if (attemptLog) values.push(r.attempt_log ?? null);
  return values;
}

/** The values of the `intents` row of `e` for `upsertIntent` (the newer columns the file has). */
export function intentValues(e: JournalEntry, parts: SchemaParts): unknown[] {
  const row = e.row as unknown as Record<string, unknown>;
  const values = INTENT_COLUMN_NAMES.map((c) => row[c]);
  if (parts.inDoubt) values.push(e.row.in_doubt);
  if (parts.attemptLog) values.push(e.row.attempt_log ?? null);
  return values;
}

const STATES = new Set<string>([...INTENT_STATES, 'purged']);

/** The columns every log row has: an intent's facts are the others. */
type MutableColumn = MutableIntentColumn | 'in_doubt' | 'attempt_log';

/**
 * Applies one log row to the journal in memory: the intent's facts come from the row itself
 * (its first since the last fold) or from what is already known of it, `known`: its entry in
 * memory, or else its folded row. Throws STORE_CORRUPT, naming the file, for a row it cannot
 * use: the journal is not guessed at.
 */
export function replayLogRow(
  log: LogRow,
  known: JournalEntry | undefined,
  folded: (commandId: string) => JournalEntry | undefined,
  path: string,
): JournalEntry {
  const corrupt = (why: string): StoreError =>
    new StoreError(
      'STORE_CORRUPT',
      `the state store ${path} has an unreadable journal row (intent_log seq ${log.seq}, intent ${log.command_id}): ${why}; restore the state directory from a backup, or move it away to start afresh`,
    );
  if (!STATES.has(log.state)) throw corrupt(`unknown state ${JSON.stringify(log.state)}`);
  const withFacts = log.payload !== null;
  const before = known ?? (withFacts ? undefined : folded(log.command_id));
  if (!withFacts && before === undefined) {
    throw corrupt('a change of an intent the journal does not have');
  }
  const facts: Omit<IntentRow, MutableColumn> = withFacts
    ? {
        command_id: log.command_id,
        user_id: log.user_id!,
        act_as: log.act_as!,
        rule_id: log.rule_id!,
        revision: log.revision!,
        action_index: log.action_index!,
        trigger_kind: log.trigger_kind!,
        trigger_update_id: log.trigger_update_id,
        trigger_node_id: log.trigger_node_id,
        trigger_slot: log.trigger_slot,
        trigger_contract_id: log.trigger_contract_id,
        justifying_offset: log.justifying_offset!,
        payload: log.payload!,
        event: log.event,
        created_at: log.created_at!,
      }
    : before!.row;
  const state: IntentState = log.state === 'purged' ? 'dead-lettered' : log.state;
  const row: IntentRow = {
    ...facts,
    state,
    attempts: log.attempts,
    submission_id: log.submission_id,
    last_error: log.last_error,
    next_attempt_at: log.next_attempt_at,
    deadline: log.deadline,
    updated_at: log.updated_at,
    completion_offset: log.completion_offset,
    completion_update_id: log.completion_update_id,
    in_doubt: log.in_doubt,
    attempt_log: log.attempt_log ?? null,
  };
  let entry: JournalEntry;
  try {
    entry = entryOfRow(
      row,
      before?.base,
      state === 'dead-lettered' && log.dl_error !== null
        ? {
            dl_error: log.dl_error,
            dl_event: log.dl_event,
            dead_lettered_at: log.dead_lettered_at!,
          }
        : undefined,
    );
  } catch (err) {
    throw corrupt((err as Error).message);
  }
  entry = { ...entry, baseDeadLetter: before?.baseDeadLetter ?? false };
  return log.state === 'purged' ? purgedEntry(entry) : entry;
}
