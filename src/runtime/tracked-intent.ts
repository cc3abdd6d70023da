import type { TimerHandle } from '../core/clock.js';
import type { IntentRecord } from '../store/store.js';
import type { Permit } from './admission.js';
import { errorRecordOf, type ErrorRecord } from './error-record.js';
import type { DedupChoice, SubmissionPayload } from './submission-payload.js';
import { INTERNAL_ERROR_CODE } from './unreadable-values.js';

/**
 * - `waiting`: a timer will start the next attempt (first attempt or a backoff);
 * - `throttled`: waiting for a token of the rule's rate limit;
 * - `submitting`: the `async/submit` call is out;
 * - `awaiting`: accepted (or found in flight); waiting for the completion;
 * - `checking`: after contention, looking up whether an earlier attempt committed or the intent
 *   is still needed (a success completion arriving meanwhile still settles it).
 */
export type Phase = 'waiting' | 'throttled' | 'submitting' | 'awaiting' | 'checking';

/**
 * One intent the submission tracker is working on, until it is terminal. Its record's payload was
 * checked when the record was read from the journal, and the tracker works only on usable ones.
 */
export type TrackedIntent = {
  readonly commandId: string;
  readonly permit: Permit;
  record: IntentRecord<SubmissionPayload>;
  dedup: DedupChoice;
  /** The submissionId of the latest attempt (from the journal after a restart). */
  submissionId: string | undefined;
  /** The latest attempt was refused as in flight: any attempt's completion now decides. */
  acceptAny: boolean;
  phase: Phase;
  timer: TimerHandle | undefined;
  /** Bumped whenever the intent moves on, so stale async continuations can tell. */
  seq: number;
  lastError: ErrorRecord | undefined;
  /** The pruning offset the dedup period was last anchored at (see `anchorAfterPruning`). */
  prunedAnchor: number | undefined;
  /** Attempts answered LEDGER_API_INTERNAL_ERROR (see unreadable-values.ts). */
  internalErrors: number;
  /** When the intent's first attempt was recorded, if this process made it (for its log line). */
  firstSubmitAt: number | undefined;
};

/** A freshly tracked intent, waiting for its first attempt. */
export function trackedIntent(
  record: IntentRecord<SubmissionPayload>,
  permit: Permit,
  dedup: DedupChoice,
): TrackedIntent {
  const lastError = errorRecordOf(record.lastError);
  return {
    commandId: record.commandId,
    permit,
    record,
    dedup,
    submissionId: record.submissionId,
    acceptAny: false,
    phase: 'waiting',
    timer: undefined,
    seq: 0,
    lastError,
    prunedAnchor: undefined,
    // After a restart only the last error is known; the bound is about a hopeless loop, and
    // maxAttempts still bounds the rest.
    internalErrors: lastError?.code === INTERNAL_ERROR_CODE ? 1 : 0,
    firstSubmitAt: undefined,
  };
}

/** Whether the intent has a submission or a lookup outstanding (what `drain` waits for). */
export function isBusy(phase: Phase): boolean {
  return phase === 'submitting' || phase === 'awaiting' || phase === 'checking';
}
