import { AbortError } from '../core/abort-error.js';
import { LedgerApiError } from './ledger-api-error.js';
import { LedgerTransportError, type TransportFailure } from './ledger-transport-error.js';

/**
 * What a failed HTTP call of the client becomes: undici's errors mapped by their codes to a
 * LedgerTransportError (`connect`: nothing was sent; `reset`, `timeout`: the outcome is unknown),
 * the call's own timeout, the caller's abort (AbortError), or the auth provider's error as it is.
 */

const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'EPROTO',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
]);

const RESET_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Error codes along the cause chain and inside AggregateErrors (happy-eyeballs connects). */
function codesOf(err: unknown): string[] {
  const codes: string[] = [];
  const queue: unknown[] = [err];
  for (let i = 0; i < queue.length && i < 20; i++) {
    const e = queue[i];
    if (e === null || typeof e !== 'object') continue;
    const { code, cause, errors } = e as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string') codes.push(code);
    if (cause !== undefined) queue.push(cause);
    if (Array.isArray(errors)) queue.push(...(errors as unknown[]));
  }
  return codes;
}

function networkFailure(err: unknown): TransportFailure | undefined {
  const codes = codesOf(err);
  if (codes.some((c) => TIMEOUT_CODES.has(c))) return 'timeout';
  if (
    codes.some(
      (c) =>
        CONNECT_CODES.has(c) ||
        c.startsWith('ERR_TLS_') ||
        c.startsWith('ERR_SSL_') ||
        c.startsWith('CERT_'),
    )
  ) {
    return 'connect';
  }
  if (codes.some((c) => RESET_CODES.has(c))) return 'reset';
  return undefined;
}

const FAILURE_ADVICE: Record<TransportFailure, string> = {
  connect:
    'could not connect (nothing was sent); check the URL, that the participant runs, and TLS',
  reset: 'lost the connection mid-request; the outcome is unknown',
  timeout: 'got no answer in time; the outcome is unknown',
  'bad-response': 'got an unreadable answer',
  closed: 'the connection closed',
};

/** Marks an error raised by the network layer (undici), as opposed to the auth provider. */
export class NetworkFailure extends Error {
  readonly error: unknown;
  constructor(error: unknown) {
    super('network failure', { cause: error });
    this.error = error;
  }
}

/** The error a call that failed with `err` throws; `timedOut`: its own timeout fired. */
export function mapTransportFailure(
  err: unknown,
  what: string,
  timeoutMs: number,
  timedOut: boolean,
  callerSignal: AbortSignal | undefined,
): unknown {
  if (err instanceof LedgerApiError || err instanceof LedgerTransportError) return err;
  const cause = err instanceof NetworkFailure ? err.error : err;
  if (timedOut) {
    return new LedgerTransportError(
      'timeout',
      what,
      `${what}: no answer within ${timeoutMs} ms; the outcome is unknown.`,
      { cause },
    );
  }
  if (callerSignal?.aborted === true) {
    return new AbortError(`${what} was aborted`, { cause: callerSignal.reason });
  }
  // Errors of the auth provider keep their own type; it names what to fix.
  if (!(err instanceof NetworkFailure)) return err;
  // Anything else undici throws mid-request leaves the outcome unknown, like a reset.
  const failure = networkFailure(cause) ?? 'reset';
  const codes = codesOf(cause);
  const detail = codes[0] ?? (cause instanceof Error ? cause.message : 'error');
  return new LedgerTransportError(
    failure,
    what,
    `${what}: ${FAILURE_ADVICE[failure]} (${detail}).`,
    { cause },
  );
}
