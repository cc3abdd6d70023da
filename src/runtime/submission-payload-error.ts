import { LedgerbotError } from '../core/ledgerbot-error.js';

/** Which part of a stored submission payload this version cannot use. */
export type SubmissionPayloadErrorCode =
  | 'PAYLOAD_NOT_OBJECT'
  | 'PAYLOAD_UNKNOWN_VERSION'
  | 'PAYLOAD_BAD_COMMANDS'
  | 'PAYLOAD_BAD_ACT_AS'
  | 'PAYLOAD_BAD_READ_AS'
  | 'PAYLOAD_BAD_WORKFLOW_ID'
  | 'PAYLOAD_BAD_DISCLOSED_CONTRACTS'
  | 'PAYLOAD_BAD_RETRY'
  | 'PAYLOAD_BAD_RATE_LIMIT'
  | 'PAYLOAD_BAD_CONCURRENCY';

/**
 * A journal entry whose payload this version cannot submit (written by a newer ledgerbot, or
 * edited by hand). The runtime dead-letters such an intent with reason `bad-payload` rather than
 * stopping: one unusable row must not keep the others from being resumed.
 */
export class SubmissionPayloadError extends LedgerbotError<SubmissionPayloadErrorCode> {
  /** The payload as the journal holds it. */
  readonly stored: unknown;

  constructor(code: SubmissionPayloadErrorCode, message: string, stored: unknown) {
    super(code, message);
    this.stored = stored;
  }

  /**
   * A record carrying this error in place of its payload prints what the journal holds, as it did
   * before payloads were decoded, so the ops API and the CLI show the operator the stored JSON.
   */
  toJSON(): unknown {
    return this.stored;
  }
}
