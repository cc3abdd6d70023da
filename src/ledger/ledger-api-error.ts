import { LedgerbotError } from '../core/ledgerbot-error.js';
import type { JsCantonError } from './js-canton-error.js';

/**
 * The participant answered with an error: a JsCantonError body (HTTP or websocket frame), or a
 * plain-text 400 (a request the JSON layer could not decode). Branch on `error.code` and
 * `error.errorCategory` (or use `classify`), never on the HTTP status: 409 means both
 * "duplicate" and "in flight".
 */
export class LedgerApiError extends LedgerbotError {
  readonly error: JsCantonError;
  /** HTTP status, or undefined for a websocket error frame. */
  readonly status: number | undefined;
  /** "METHOD /path" of the call. */
  readonly request: string;

  constructor(
    error: JsCantonError,
    request: string,
    status?: number,
    options?: { cause?: unknown },
  ) {
    super(
      error.code,
      `${request} failed: ${error.code} (category ${error.errorCategory}): ${error.cause}`,
      options,
    );
    this.error = error;
    this.status = status;
    this.request = request;
  }

  /**
   * Whether the rejection is final for that submission. Canton puts it in `context.definite_answer`;
   * the top-level `definiteAnswer` is set only by errors made inside the JSON layer.
   */
  get definiteAnswer(): boolean | undefined {
    const ctx = this.error.context.definite_answer;
    if (ctx === 'true') return true;
    if (ctx === 'false') return false;
    return this.error.definiteAnswer ?? undefined;
  }

  /** Builds the error for a plain-text 400 answer (tapir's "Invalid value for: body ..."). */
  static fromPlainText(text: string, request: string, status: number): LedgerApiError {
    return new LedgerApiError(
      {
        code: 'INVALID_REQUEST_BODY',
        cause: text.trim(),
        correlationId: null,
        traceId: null,
        context: {},
        resources: [],
        errorCategory: 8,
        grpcCodeValue: 3,
        retryInfo: null,
        definiteAnswer: true,
      },
      request,
      status,
    );
  }
}
