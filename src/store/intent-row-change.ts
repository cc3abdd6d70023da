import { IllegalStateError } from '../core/illegal-state-error.js';
import { nextAttemptLog } from './attempt-log.js';
import { inDoubtOf, toJson, type IntentRow } from './sqlite-rows.js';
import { INTENT_TRANSITIONS, TERMINAL_STATES, type IntentChange } from './store.js';

/**
 * The intent row after `change` at `now`, computed whole so that what the store returns is what
 * it writes. Throws IllegalStateError for a move INTENT_TRANSITIONS does not allow. Pure: the
 * store writes the row (and, for `dead-lettered`, the dead-letter row).
 */
export function changedIntentRow(current: IntentRow, change: IntentChange, now: number): IntentRow {
  const state = current.state;
  if (!INTENT_TRANSITIONS[state].includes(change.to)) {
    throw new IllegalStateError(
      `intent ${current.command_id} cannot go from ${state} to ${change.to}` +
        (TERMINAL_STATES.has(state)
          ? `: ${state} is final`
          : `; allowed: ${INTENT_TRANSITIONS[state].join(', ')}`),
    );
  }
  const next: IntentRow = { ...current, state: change.to, updated_at: now };
  // An attempt left without a definite answer may have committed: a resubmission over an
  // outstanding attempt, or a retry after an answer that was not definite.
  const inDoubt =
    inDoubtOf(current) ||
    (current.state === 'submitted' &&
      (change.to === 'submitted' || (change.to === 'pending' && change.definite !== true)));
  if (inDoubt) next.in_doubt = 1;
  next.attempt_log = nextAttemptLog(current.attempt_log, current.attempts, state, change, now);
  switch (change.to) {
    case 'submitted':
      next.attempts = current.attempts + 1;
      next.submission_id = change.submissionId;
      next.next_attempt_at = null;
      break;
    case 'pending':
      next.next_attempt_at = change.nextAttemptAt;
      if (change.error !== undefined) next.last_error = toJson(change.error, 'error');
      break;
    case 'succeeded':
    case 'duplicate':
      next.completion_offset = change.completionOffset ?? null;
      next.completion_update_id = change.updateId ?? null;
      next.next_attempt_at = null;
      break;
    case 'rejected':
      next.last_error = toJson(change.error, 'error');
      next.completion_offset = change.completionOffset ?? null;
      next.next_attempt_at = null;
      break;
    case 'dead-lettered':
      next.last_error = toJson(change.error, 'error');
      next.next_attempt_at = null;
      break;
  }
  return next;
}
