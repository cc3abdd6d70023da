import type { DedupConfig } from './config/bot-config.js';
import { classifyForSubmission, completionOffsetOf } from './classify-for-submission.js';
import { dedupStep } from './dedup-period.js';
import type { ErrorRecord } from './error-record.js';
import type { GiveUpReason } from './retry-schedule.js';
import type { TrackedIntent } from './tracked-intent.js';
import { UNREADABLE_VALUES_ATTEMPTS, unreadableValuesError } from './unreadable-values.js';

/**
 * What the tracker does after an attempt failed (synchronously, or in its completion):
 * - `fall-back-dedup`: retry at once with the dedup duration `ms` (see `dedupStep`);
 * - `anchor-at-pruning`: look up the pruning offset and anchor the dedup period there;
 * - `duplicate`: an earlier attempt landed: settle `duplicate`;
 * - `await-in-flight`: another attempt is in flight: wait for any attempt's completion;
 * - `retry`: back off and resubmit under the same commandId;
 * - `recheck`: contention: look for an earlier commit, or whether the intent is still needed;
 * - `dead-letter`: give up for `reason`, with `lastError` replacing the intent's when set.
 */
export type AttemptErrorStep =
  | { readonly kind: 'fall-back-dedup'; readonly ms: number }
  | { readonly kind: 'anchor-at-pruning' }
  | { readonly kind: 'duplicate'; readonly completionOffset: number | undefined }
  | { readonly kind: 'await-in-flight' }
  | { readonly kind: 'retry' }
  | { readonly kind: 'recheck' }
  | {
      readonly kind: 'dead-letter';
      readonly reason: GiveUpReason;
      readonly lastError?: ErrorRecord;
    };

/**
 * Decides the step for `err`. `internal` says whether it was a synchronous internal error of
 * the participant (see `isInternalSubmitError`), already counted in `t.internalErrors`.
 * Pure: the tracker applies the step.
 */
export function attemptErrorStep(
  t: Pick<TrackedIntent, 'dedup' | 'record' | 'internalErrors' | 'lastError'>,
  err: unknown,
  completionOffset: number | undefined,
  internal: boolean,
  config: DedupConfig,
): AttemptErrorStep {
  const dedup = dedupStep(err, t.dedup, t.record.inDoubt === true, config);
  if (dedup.kind === 'fall-back') return { kind: 'fall-back-dedup', ms: dedup.ms };
  if (dedup.kind === 'anchor-at-pruning') return dedup;
  if (
    internal &&
    (t.internalErrors >= UNREADABLE_VALUES_ATTEMPTS ||
      t.record.attempts >= t.record.payload.retry.maxAttempts)
  ) {
    return {
      kind: 'dead-letter',
      reason: 'unreadable-values',
      lastError: unreadableValuesError(t.record.payload, t.lastError, t.internalErrors),
    };
  }
  switch (classifyForSubmission(err)) {
    case 'duplicate':
      return { kind: 'duplicate', completionOffset: completionOffsetOf(err) ?? completionOffset };
    case 'in-flight':
      return { kind: 'await-in-flight' };
    case 'retryable':
    case 'unknown-outcome':
      return { kind: 'retry' };
    case 'stale':
      return { kind: 'recheck' };
    case 'final':
      return { kind: 'dead-letter', reason: 'final' };
  }
}
