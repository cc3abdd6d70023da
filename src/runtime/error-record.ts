import { LedgerApiError } from '../ledger/ledger-api-error.js';
import { LedgerTransportError } from '../ledger/ledger-transport-error.js';

/**
 * An error as the journal and the dead-letter table keep it: JSON, with the stable code first.
 * Ledger errors keep the participant's JsCantonError (no secrets: the participant never echoes
 * tokens); other errors keep only their code and message, which ledgerbot writes token-free.
 */
export type ErrorRecord = {
  readonly code: string;
  readonly message: string;
  /** "METHOD /path" of the failed call, for ledger errors. */
  readonly request?: string;
  readonly status?: number;
  /** The participant's error, for LedgerApiErrors (from an HTTP answer or a completion). */
  readonly cantonError?: unknown;
};

export function errorRecord(err: unknown): ErrorRecord {
  if (err instanceof LedgerApiError) {
    return {
      code: err.error.code,
      message: err.message,
      request: err.request,
      ...(err.status === undefined ? {} : { status: err.status }),
      cantonError: err.error,
    };
  }
  if (err instanceof LedgerTransportError) {
    return {
      code: err.code,
      message: err.message,
      request: err.request,
      ...(err.status === undefined ? {} : { status: err.status }),
    };
  }
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { code: typeof code === 'string' ? code : err.name, message: err.message };
  }
  return { code: 'UNKNOWN', message: String(err) };
}

/** The stable code of any error, for log fields and metrics. */
export function errorCode(err: unknown): string {
  return errorRecord(err).code;
}

/** An ErrorRecord read back from the journal (JSON), or undefined if it is not one. */
export function errorRecordOf(value: unknown): ErrorRecord | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const v = value as { code?: unknown; message?: unknown };
  return typeof v.code === 'string' && typeof v.message === 'string'
    ? (value as ErrorRecord)
    : undefined;
}

/** The log fields of an error: its stable code and message. */
export function errorFields(err: unknown): Record<string, unknown> {
  const r = errorRecord(err);
  return { errorCode: r.code, error: r.message };
}

/**
 * The dead letter's error when pruning hid whether an earlier attempt of the command committed:
 * `why` says what the participant no longer knows.
 */
export function earlierCommitUnknownRecord(
  why: string,
  last: ErrorRecord | undefined,
): ErrorRecord {
  return {
    ...last,
    code: 'EARLIER_COMMIT_UNKNOWN',
    message: `${why}, and the ledger can no longer tell. Check the ledger, then drop or requeue the dead letter.`,
  };
}
