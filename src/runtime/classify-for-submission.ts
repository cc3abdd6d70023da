import { classify, type Classification } from '../ledger/classify.js';
import { isTokenRejected } from '../ledger/error-checks.js';
import { LedgerApiError } from '../ledger/ledger-api-error.js';

/**
 * `classify`, except that a rejected token (UNAUTHENTICATED) is retried with backoff: the token
 * may be renewed meanwhile, and dead-lettering every intent during an identity-provider outage
 * would be worse. The attempt and deadline bounds still apply.
 */
export function classifyForSubmission(err: unknown): Classification {
  if (isTokenRejected(err)) return 'retryable';
  return classify(err);
}

/** The offset of the earlier accepted completion a DUPLICATE_COMMAND names. */
export function completionOffsetOf(err: unknown): number | undefined {
  if (!(err instanceof LedgerApiError)) return undefined;
  const raw = err.error.context.completion_offset;
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Whether the attempt that got `err` certainly did not commit: a participant's answer (a
 * synchronous rejection, or a rejected completion of that attempt) that is not an unknown
 * outcome. A transport failure or a timeout is never definite.
 */
export function isDefinite(err: unknown): boolean {
  if (!(err instanceof LedgerApiError)) return false;
  const c = classifyForSubmission(err);
  return c !== 'unknown-outcome' && c !== 'in-flight';
}
