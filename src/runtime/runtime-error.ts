import { LedgerbotError } from '../core/ledgerbot-error.js';

export type RuntimeErrorCode =
  /** The rules need no subscription and no submission: nothing to run. */
  | 'NO_RULES'
  /** A rule names a party alias that has no party id. */
  | 'UNKNOWN_PARTY'
  /** The updates or completions stream failed in a way retrying cannot fix. */
  | 'STREAM_FAILED'
  /** An intent waited for a completion past `completionTimeout` (recorded as its last error). */
  | 'COMPLETION_TIMEOUT'
  /** An intent ran out of attempts or time (recorded in its dead letter). */
  | 'RETRIES_EXHAUSTED';

/** A failure of the trigger runtime itself (not of one ledger call). */
export class RuntimeError extends LedgerbotError {
  declare readonly code: RuntimeErrorCode;

  constructor(code: RuntimeErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
