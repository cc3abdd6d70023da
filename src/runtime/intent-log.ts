import type { Logger } from '../core/logger.js';
import type { IntentRecord, IntentState } from '../store/store.js';
import type { ErrorRecord } from './error-record.js';

/** The id fields every intent log line carries. */
export function intentFields(record: IntentRecord): Record<string, unknown> {
  const { trigger } = record;
  const fields: Record<string, unknown> = {
    ruleId: record.ruleId,
    commandId: record.commandId,
    offset: record.offset,
  };
  if (trigger.kind === 'event') {
    fields.updateId = trigger.updateId;
    fields.nodeId = trigger.nodeId;
  } else if (trigger.kind === 'contract') {
    fields.contractId = trigger.contractId;
    fields.nodeId = trigger.nodeId;
  } else {
    fields.slot = trigger.slot;
    fields.contractId = trigger.contractId;
  }
  return fields;
}

/**
 * When an intent's first submission was made (`firstSubmitAt`, epoch ms; unknown for an intent
 * first submitted by an earlier run) and the time of the change being logged (`now`).
 */
export type IntentTimes = {
  readonly firstSubmitAt: number | undefined;
  readonly now: number;
};

/**
 * The log line of an intent state change. `info` gets one line per finished intent (`intent
 * finished`: succeeded or duplicate, with its attempts and timings) and every failure (`intent
 * state changed`: a retry after an error and a rejection at `warn`, a dead letter at `error`);
 * the other changes (recorded, submitted) are `debug` lines, built only when debug is on: at
 * info they would be two of the three lines of every intent.
 */
export function logIntent(
  logger: Logger,
  record: IntentRecord,
  from: IntentState | null,
  error?: ErrorRecord,
  times?: IntentTimes,
): void {
  const { state } = record;
  if (state === 'succeeded' || state === 'duplicate') {
    logger.info(finishedFields(record, from, times), 'intent finished');
    return;
  }
  if (state === 'dead-lettered') {
    logger.error(changeFields(record, from, error), 'intent state changed');
  } else if (state === 'rejected' || (error !== undefined && state === 'pending')) {
    logger.warn(changeFields(record, from, error), 'intent state changed');
  } else if (logger.isLevelEnabled?.('debug') !== false) {
    logger.debug(changeFields(record, from, error), 'intent state changed');
  }
}

function changeFields(
  record: IntentRecord,
  from: IntentState | null,
  error: ErrorRecord | undefined,
): Record<string, unknown> {
  const fields = commonFields(record, from);
  if (record.nextAttemptAt !== undefined && record.state === 'pending') {
    fields.nextAttemptAt = record.nextAttemptAt;
  }
  if (error !== undefined) {
    fields.errorCode = error.code;
    fields.error = error.message;
  }
  return fields;
}

/**
 * `recordToSubmitMs`: from recording the intent to its first submission (absent when an earlier
 * run made it); `recordToCompletionMs`: from recording to this line. Both from this host's clock.
 */
function finishedFields(
  record: IntentRecord,
  from: IntentState | null,
  times: IntentTimes | undefined,
): Record<string, unknown> {
  const fields = commonFields(record, from);
  if (times?.firstSubmitAt !== undefined) {
    fields.recordToSubmitMs = times.firstSubmitAt - record.createdAt;
  }
  if (times !== undefined) fields.recordToCompletionMs = times.now - record.createdAt;
  return fields;
}

function commonFields(record: IntentRecord, from: IntentState | null): Record<string, unknown> {
  const fields = intentFields(record);
  fields.from = from;
  fields.state = record.state;
  fields.attempts = record.attempts;
  if (record.submissionId !== undefined) fields.submissionId = record.submissionId;
  if (record.completionOffset !== undefined) fields.completionOffset = record.completionOffset;
  if (record.completionUpdateId !== undefined) {
    fields.completionUpdateId = record.completionUpdateId;
  }
  return fields;
}
