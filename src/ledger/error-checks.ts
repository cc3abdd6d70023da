import { LedgerApiError } from './ledger-api-error.js';

/**
 * Named checks of what a ledger error says: its code, category, HTTP status or gRPC status.
 * They live here, next to `classify`, so that the rest of ledgerbot asks a question ("was the
 * token rejected?") instead of re-reading status numbers; lint bans `.status === <n>` and
 * `grpcCodeValue ===` outside `src/ledger/`.
 */

/** The participant's error code, or undefined when `err` is not a participant's answer. */
export function ledgerErrorCode(err: unknown): string | undefined {
  return err instanceof LedgerApiError ? err.error.code : undefined;
}

/** Whether `err` is the participant's answer with this error code. */
export function hasLedgerErrorCode(err: unknown, code: string): boolean {
  return ledgerErrorCode(err) === code;
}

/** A check that `err` is the participant's answer with one of `codes`. */
function hasAnyLedgerErrorCode(...codes: readonly string[]): (err: unknown) => boolean {
  const set: ReadonlySet<string> = new Set(codes);
  return (err) => {
    const code = ledgerErrorCode(err);
    return code !== undefined && set.has(code);
  };
}

/**
 * The participant ended a stream because the token behind it expired (`ACCESS_TOKEN_EXPIRED`)
 * or the user's rights changed (`STALE_STREAM_AUTHORIZATION`), both category 2 (the codes with
 * which Canton ends an open stream whose authorization lapsed: NOTES.md, Corrections). Nothing
 * is wrong with the request: reopen it at once with a fresh token, not after the category's
 * retry delay.
 */
export const isStreamAuthExpiry: (err: unknown) => boolean = hasAnyLedgerErrorCode(
  'ACCESS_TOKEN_EXPIRED',
  'STALE_STREAM_AUTHORIZATION',
);

/** gRPC status codes (NOTES.md §5.1). */
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNAUTHENTICATED = 16;

/**
 * The participant rejected the call's token: HTTP 401, or UNAUTHENTICATED (gRPC 16, e.g. an
 * error frame of a websocket opened with an expired token).
 */
export function isTokenRejected(err: unknown): boolean {
  return (
    err instanceof LedgerApiError &&
    (err.status === 401 || err.error.grpcCodeValue === GRPC_UNAUTHENTICATED)
  );
}

/**
 * The participant refused the caller: a rejected token (`isTokenRejected`), or a token without
 * the rights the call needs (HTTP 403, PERMISSION_DENIED = gRPC 7).
 */
export function isAuthRejection(err: unknown): boolean {
  return (
    isTokenRejected(err) ||
    (err instanceof LedgerApiError &&
      (err.status === 403 || err.error.grpcCodeValue === GRPC_PERMISSION_DENIED))
  );
}

/**
 * The token the call used is no good any more: rejected, or a stream auth expiry. The auth
 * provider's cached token must be dropped before the next attempt.
 */
export function needsFreshToken(err: unknown): boolean {
  return isTokenRejected(err) || isStreamAuthExpiry(err);
}

/**
 * A command the JSON layer could not transcode: Canton 3.5 answers a value of the wrong JSON kind
 * (an Int64 as a number, a number for Text or Party, a string for Bool, an unknown enum
 * constructor, ...) with HTTP 500 `LEDGER_API_INTERNAL_ERROR`, category 4, `definiteAnswer: false`
 * (NOTES.md, Corrections). `classify` calls it `unknown-outcome`, as for any internal error, but
 * the command never reached the ledger and the same request fails the same way again: bound its
 * retries. An internal error from the gRPC side comes redacted (`NA`), so an unredacted one on a
 * command call is this.
 */
export function isValueTranscodingFailure(err: unknown): boolean {
  return (
    err instanceof LedgerApiError &&
    err.status === 500 &&
    err.error.code === 'LEDGER_API_INTERNAL_ERROR' &&
    err.request.startsWith('POST /v2/commands/')
  );
}

/**
 * The participant pruned the data the call asked for (PARTICIPANT_PRUNED_DATA_ACCESSED): an
 * offset, a completion or a dedup anchor before its pruning offset.
 */
export function isPrunedDataAccess(err: unknown): boolean {
  return hasLedgerErrorCode(err, 'PARTICIPANT_PRUNED_DATA_ACCESSED');
}

/**
 * The oldest offset the participant still serves, as a PARTICIPANT_PRUNED_DATA_ACCESSED names it
 * (`context.earliest_offset`, as sent); undefined for any other error or when it names none.
 */
export function earliestOffsetOf(err: unknown): string | undefined {
  if (!(err instanceof LedgerApiError) || !isPrunedDataAccess(err)) return undefined;
  return err.error.context.earliest_offset;
}

/**
 * The participant refused the submission's dedup period: too long for its maximum, or anchored
 * at an offset it has pruned. The offset-anchored period is unusable: fall back to a duration.
 */
export const isDedupPeriodRefused: (err: unknown) => boolean = hasAnyLedgerErrorCode(
  'INVALID_DEDUPLICATION_PERIOD',
  'PARTICIPANT_PRUNED_DATA_ACCESSED',
);

/** Contention on a contract key: the key is taken, possibly by the intent's own earlier create. */
export const isKeyConflict: (err: unknown) => boolean = hasAnyLedgerErrorCode(
  'DUPLICATE_CONTRACT_KEY',
  'INCONSISTENT_CONTRACT_KEY',
);

/** Category 11, InvalidGivenCurrentSystemStateResourceMissing (NOTES.md §8). */
const RESOURCE_MISSING = 11;

/**
 * What the call names does not exist for the caller (category 11): unknown to the participant,
 * not visible to the parties, or pruned. USER_NOT_FOUND, CONTRACT_EVENTS_NOT_FOUND,
 * UPDATE_NOT_FOUND and the like.
 */
export function isResourceMissing(err: unknown): boolean {
  return err instanceof LedgerApiError && err.error.errorCategory === RESOURCE_MISSING;
}
