import type { Logger } from '../core/logger.js';
import type { IntentRecord, IntentState } from '../store/store.js';
import type { ErrorRecord } from './error-record.js';

/** The id fields every intent log line carries. */
export function intentFields(record: IntentRecord): Record<string, unknown> {
  return {
    ruleId: record.ruleId,
    commandId: record.commandId,
    offset: record.offset,
    ...(record.trigger.kind === 'event'
      ? { updateId: record.trigger.updateId, nodeId: record.trigger.nodeId }
      : record.trigger.kind === 'contract'
        ? { contractId: record.trigger.contractId, nodeId: record.trigger.nodeId }
        : { slot: record.trigger.slot, contractId: record.trigger.contractId }),
  };
}

/** The one log line of an intent state change. */
export function logIntent(
  logger: Logger,
  record: IntentRecord,
  from: IntentState | null,
  error?: ErrorRecord,
): void {
  const fields = {
    ...intentFields(record),
    from,
    state: record.state,
    attempts: record.attempts,
    ...(record.submissionId === undefined ? {} : { submissionId: record.submissionId }),
    ...(record.nextAttemptAt === undefined || record.state !== 'pending'
      ? {}
      : { nextAttemptAt: record.nextAttemptAt }),
    ...(record.completionOffset === undefined ? {} : { completionOffset: record.completionOffset }),
    ...(record.completionUpdateId === undefined
      ? {}
      : { completionUpdateId: record.completionUpdateId }),
    ...(error === undefined ? {} : { errorCode: error.code, error: error.message }),
  };
  if (record.state === 'dead-lettered') logger.error(fields, 'intent state changed');
  else if (record.state === 'rejected' || (error !== undefined && record.state === 'pending'))
    logger.warn(fields, 'intent state changed');
  else logger.info(fields, 'intent state changed');
}
