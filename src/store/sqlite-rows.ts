import type {
  DeadLetter,
  IntentRecord,
  IntentState,
  NewIntent,
  SlotRecord,
  TriggerKey,
} from './store.js';
import { StoreError } from './store-error.js';

/** A row of `intents`, as better-sqlite3 reads and writes it. */
export type IntentRow = {
  command_id: string;
  user_id: string;
  act_as: string;
  rule_id: string;
  revision: number;
  action_index: number;
  trigger_kind: 'event' | 'slot';
  trigger_update_id: string | null;
  trigger_node_id: number | null;
  trigger_slot: number | null;
  trigger_contract_id: string | null;
  justifying_offset: number;
  payload: string;
  event: string | null;
  state: IntentState;
  attempts: number;
  submission_id: string | null;
  last_error: string | null;
  next_attempt_at: number | null;
  deadline: number | null;
  created_at: number;
  updated_at: number;
  completion_offset: number | null;
  completion_update_id: string | null;
  /** Since schema version 2 (absent in a row read from an older file). */
  in_doubt?: number;
  /** Since schema version 5: the attempts as JSON (see attempt-log.ts); null before the first. */
  attempt_log?: string | null;
};

/** An intent row joined with its `dead_letters` row. */
export type DeadLetterRow = IntentRow & {
  dl_error: string;
  dl_event: string | null;
  dead_lettered_at: number;
};

export type SlotRow = {
  rule_id: string;
  last_completed_slot: number | null;
  in_progress_slot: number | null;
  in_progress_since: number | null;
  snapshot_offset: number | null;
};

/** The row of a new intent: `pending`, no attempt yet. */
export function newIntentRow(intent: NewIntent, now: number): IntentRow {
  return {
    command_id: intent.commandId,
    user_id: intent.userId,
    act_as: JSON.stringify([...intent.actAs].sort()),
    rule_id: intent.ruleId,
    revision: intent.revision,
    action_index: intent.actionIndex,
    ...triggerColumns(intent.trigger),
    justifying_offset: intent.offset,
    payload: toJson(intent.payload, `payload of ${intent.commandId}`),
    event: intent.event === undefined ? null : toJson(intent.event, 'event'),
    state: 'pending',
    attempts: 0,
    submission_id: null,
    last_error: null,
    next_attempt_at: intent.nextAttemptAt ?? now,
    deadline: intent.deadline ?? null,
    created_at: now,
    updated_at: now,
    completion_offset: null,
    completion_update_id: null,
  };
}

type TriggerColumns = Pick<
  IntentRow,
  'trigger_kind' | 'trigger_update_id' | 'trigger_node_id' | 'trigger_slot' | 'trigger_contract_id'
>;

function triggerColumns(t: TriggerKey): TriggerColumns {
  return {
    // A `contract` trigger is stored as an event row without an update id (the column the
    // table's CHECK allows; no table rebuild for a new kind): it stands for the creation event,
    // so it holds the checkpoint and is compacted like the event rows.
    trigger_kind: t.kind === 'slot' ? 'slot' : 'event',
    trigger_update_id: t.kind === 'event' ? t.updateId : null,
    trigger_node_id: t.kind === 'slot' ? null : t.nodeId,
    trigger_slot: t.kind === 'slot' ? t.slot : null,
    // A slot without `forEach` has been stored as '' since the journal's first version.
    trigger_contract_id: t.kind === 'event' ? null : (t.contractId ?? ''),
  };
}

export function triggerOf(row: IntentRow): TriggerKey {
  if (row.trigger_kind === 'slot') {
    const contractId = row.trigger_contract_id;
    return {
      kind: 'slot',
      slot: row.trigger_slot ?? 0,
      contractId: contractId === null || contractId === '' ? null : contractId,
    };
  }
  if (row.trigger_update_id === null && row.trigger_contract_id !== null) {
    return {
      kind: 'contract',
      contractId: row.trigger_contract_id,
      nodeId: row.trigger_node_id ?? 0,
    };
  }
  return { kind: 'event', updateId: row.trigger_update_id ?? '', nodeId: row.trigger_node_id ?? 0 };
}

/** A row of an older schema does not know: any attempt counts as in doubt. */
export function inDoubtOf(row: IntentRow): boolean {
  return row.in_doubt === undefined ? row.attempts > 0 : row.in_doubt === 1;
}

export function toIntent(row: IntentRow): IntentRecord {
  return {
    commandId: row.command_id,
    userId: row.user_id,
    actAs: JSON.parse(row.act_as) as string[],
    ruleId: row.rule_id,
    revision: row.revision,
    actionIndex: row.action_index,
    trigger: triggerOf(row),
    offset: row.justifying_offset,
    payload: JSON.parse(row.payload) as unknown,
    state: row.state,
    attempts: row.attempts,
    ...(row.submission_id === null ? {} : { submissionId: row.submission_id }),
    ...(row.last_error === null ? {} : { lastError: JSON.parse(row.last_error) as unknown }),
    ...(row.next_attempt_at === null ? {} : { nextAttemptAt: row.next_attempt_at }),
    ...(row.deadline === null ? {} : { deadline: row.deadline }),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.completion_offset === null ? {} : { completionOffset: row.completion_offset }),
    ...(row.completion_update_id === null ? {} : { completionUpdateId: row.completion_update_id }),
    ...(inDoubtOf(row) ? { inDoubt: true as const } : {}),
  };
}

export function toDeadLetter(row: DeadLetterRow): DeadLetter {
  return {
    intent: toIntent(row),
    error: JSON.parse(row.dl_error) as unknown,
    ...(row.dl_event === null ? {} : { event: JSON.parse(row.dl_event) as unknown }),
    deadLetteredAt: row.dead_lettered_at,
  };
}

export function toSlot(row: SlotRow): SlotRecord {
  return {
    ruleId: row.rule_id,
    ...(row.last_completed_slot === null ? {} : { lastCompletedSlot: row.last_completed_slot }),
    ...(row.in_progress_slot === null ? {} : { inProgressSlot: row.in_progress_slot }),
    ...(row.in_progress_since === null ? {} : { inProgressSince: row.in_progress_since }),
    ...(row.snapshot_offset === null ? {} : { snapshotOffset: row.snapshot_offset }),
  };
}

/** The JSON text of a value for a TEXT column; STORE_NOT_JSON if it has none. */
export function toJson(value: unknown, what: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new StoreError('STORE_NOT_JSON', `${what} cannot be stored as JSON`, { cause: err });
  }
  if (text === undefined) {
    throw new StoreError('STORE_NOT_JSON', `${what} is not a JSON value`);
  }
  return text;
}
