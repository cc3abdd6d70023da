import { AbortError } from '../core/abort-error.js';
import { AuthError } from './auth/auth-error.js';
import { parseJsCantonError, type JsCantonError } from './js-canton-error.js';
import { LedgerApiError } from './ledger-api-error.js';
import { LedgerTransportError } from './ledger-transport-error.js';
import { parseScalaDuration } from './scala-duration.js';

/**
 * What a failed call means for the intent that made it (ARCHITECTURE.md, correctness kernel 4):
 * - `retryable`: nothing happened; retry with backoff under the same commandId;
 * - `duplicate`: an earlier attempt landed (DUPLICATE_COMMAND); treat it as success;
 * - `in-flight`: another attempt is being processed; wait for its completion;
 * - `stale`: contention on the inputs; re-check whether the intent is still needed, then retry;
 * - `final`: retrying the same request cannot help;
 * - `unknown-outcome`: the command may or may not have been executed; resubmit under the same
 *   commandId (deduplication makes that safe) or watch completions.
 */
export type Classification =
  'retryable' | 'duplicate' | 'in-flight' | 'stale' | 'final' | 'unknown-outcome';

/** The inputs changed under us: the rule's trigger may no longer hold (NOTES.md §8.4). */
const CONTENTION_CODES: ReadonlySet<string> = new Set([
  'CONTRACT_NOT_FOUND',
  'CONTRACT_NOT_ACTIVE',
  'LOCAL_VERDICT_INACTIVE_CONTRACTS',
  'LOCAL_VERDICT_LOCKED_CONTRACTS',
  'INCONSISTENT',
  'INCONSISTENT_CONTRACT_KEY',
  'DUPLICATE_CONTRACT_KEY',
]);

/** Codes whose category says "retry" but where the same request fails the same way again. */
const FINAL_CODES: ReadonlySet<string> = new Set(['JSON_API_MAXIMUM_LIST_ELEMENTS_NUMBER_REACHED']);

/** Error-specific retry delays that the JSON error's `retryInfo` does not show (NOTES.md §8.1). */
const RETRY_OVERRIDES_MS: Readonly<Record<string, number>> = {
  ABORTED_DUE_TO_SHUTDOWN: 10_000,
  INTERPRETATION_TIME_EXCEEDED: 60_000,
};

/**
 * Classifies anything a ledger call can throw, and completion errors (see `completionError`).
 * Branches on `code` and `errorCategory`, never on the HTTP status: 409 is both duplicate and
 * in-flight.
 */
export function classify(err: unknown): Classification {
  if (err instanceof LedgerApiError) return classifyCantonError(err.error, err.definiteAnswer);
  if (err instanceof LedgerTransportError) return classifyTransport(err);
  if (err instanceof AuthError) return err.retryable ? 'retryable' : 'final';
  if (err instanceof AbortError) return 'final';
  const body = parseJsCantonError(err);
  if (body !== undefined) return classifyCantonError(body, definiteAnswerOf(body));
  return 'final';
}

/**
 * The delay the participant asks for before a retry, in ms, or undefined when it gives none.
 * Known per-code overrides win over `retryInfo`, which only carries the category default.
 */
export function retryDelayHintMs(err: unknown): number | undefined {
  const body = err instanceof LedgerApiError ? err.error : parseJsCantonError(err);
  if (body === undefined) return undefined;
  const override = RETRY_OVERRIDES_MS[body.code];
  if (override !== undefined) return override;
  return body.retryInfo === null ? undefined : parseScalaDuration(body.retryInfo);
}

function classifyCantonError(
  e: JsCantonError,
  definiteAnswer: boolean | undefined,
): Classification {
  if (e.code === 'DUPLICATE_COMMAND') return 'duplicate';
  if (e.code === 'SUBMISSION_ALREADY_IN_FLIGHT') return 'in-flight';
  if (CONTENTION_CODES.has(e.code)) return 'stale';
  if (FINAL_CODES.has(e.code)) return 'final';
  switch (e.errorCategory) {
    case 1: // TransientServerFailure
    case 2: // ContentionOnSharedResources
    case 12: // InvalidGivenCurrentSystemStateSeekAfterEnd
      return 'retryable';
    case 3: // DeadlineExceededRequestStateUnknown
      return 'unknown-outcome';
    case 4: // SystemInternalAssumptionViolated
      return definiteAnswer === true ? 'final' : 'unknown-outcome';
    case 5:
    case 6:
    case 7:
    case 8:
    case 9:
    case 10:
    case 11:
    case 13:
    case 14:
      return 'final';
    default:
      // -1: a redacted security-sensitive error (`code: "NA"`) or a non-Canton gRPC error.
      return classifyGrpcCode(e.grpcCodeValue, definiteAnswer);
  }
}

/** For errors without a category, the gRPC status is all we have (NOTES.md §5.1, §8.3). */
function classifyGrpcCode(
  grpcCode: number | null,
  definiteAnswer: boolean | undefined,
): Classification {
  switch (grpcCode) {
    case 8: // RESOURCE_EXHAUSTED
    case 10: // ABORTED
    case 11: // OUT_OF_RANGE
    case 14: // UNAVAILABLE
      return 'retryable';
    case 1: // CANCELLED: the server gave up on the call at an unknown point
    case 2: // UNKNOWN
    case 4: // DEADLINE_EXCEEDED
      return 'unknown-outcome';
    case 13: // INTERNAL
      return definiteAnswer === true ? 'final' : 'unknown-outcome';
    default:
      // INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS (without a code we cannot call it a
      // duplicate), PERMISSION_DENIED, FAILED_PRECONDITION, UNIMPLEMENTED, DATA_LOSS,
      // UNAUTHENTICATED (the HTTP client refreshes the token itself before this surfaces), none.
      return 'final';
  }
}

/**
 * `connect` means nothing reached the server. A broken, timed-out or closed call may have been
 * executed. An unreadable answer is decided by its status: 502/503/504 and 408 come from a proxy
 * or the JSON layer's own request timeout with the request possibly forwarded (unknown outcome);
 * 429 is a rate limiter that turned the request away (retryable); anything else (a login page, a
 * 404 from a wrong URL prefix) is a configuration problem that retrying cannot fix (final).
 */
function classifyTransport(err: LedgerTransportError): Classification {
  switch (err.failure) {
    case 'connect':
      return 'retryable';
    case 'reset':
    case 'timeout':
    case 'closed':
      return 'unknown-outcome';
    case 'bad-response':
      if (err.status === 429) return 'retryable';
      if (err.status === 408 || err.status === 502 || err.status === 503 || err.status === 504)
        return 'unknown-outcome';
      return 'final';
  }
}

function definiteAnswerOf(e: JsCantonError): boolean | undefined {
  const ctx = e.context.definite_answer;
  if (ctx === 'true') return true;
  if (ctx === 'false') return false;
  return e.definiteAnswer ?? undefined;
}
