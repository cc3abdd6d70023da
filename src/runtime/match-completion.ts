import { completionError } from '../ledger/completion-status.js';
import type { LedgerApiError } from '../ledger/ledger-api-error.js';
import type { Completion } from '../ledger/wire/wire-types.js';
import type { IntentChange } from '../store/store.js';
import type { TrackedIntent } from './tracked-intent.js';

export const SUBMIT_REQUEST = 'POST /v2/commands/async/submit';

/**
 * What one completion of a tracked intent's commandId means for it:
 * - `succeeded`: a success of ANY attempt (ours, an earlier run's, a twin replica's) means the
 *   change landed;
 * - `failed`: the current attempt failed with `error` (or, after SUBMISSION_ALREADY_IN_FLIGHT,
 *   any attempt, since we wait for whichever is in flight);
 * - `superseded`: a failure of an attempt already replaced by a newer one, which decides.
 */
export type CompletionMatch =
  | { readonly kind: 'succeeded'; readonly change: IntentChange }
  | { readonly kind: 'failed'; readonly error: LedgerApiError }
  | { readonly kind: 'superseded'; readonly error: LedgerApiError };

export function matchCompletion(
  t: Pick<TrackedIntent, 'acceptAny' | 'submissionId'>,
  completion: Completion,
  offset: number,
): CompletionMatch {
  const error = completionError(completion, SUBMIT_REQUEST);
  if (error === undefined) {
    return {
      kind: 'succeeded',
      change: {
        to: 'succeeded',
        completionOffset: offset,
        ...(completion.updateId === undefined ? {} : { updateId: completion.updateId }),
      },
    };
  }
  const current =
    t.acceptAny ||
    completion.submissionId === undefined ||
    completion.submissionId === t.submissionId;
  return { kind: current ? 'failed' : 'superseded', error };
}
