import { LedgerbotError } from '../core/ledgerbot-error.js';

/**
 * Why a call failed before the participant gave an answer we could read:
 * - `connect`: refused, DNS or TLS failure (nothing reached the server);
 * - `reset`: the connection broke mid-request (the outcome is unknown);
 * - `timeout`: no answer within the request timeout (the outcome is unknown);
 * - `bad-response`: an answer that is neither JSON nor a plain-text 400 (a proxy page, say);
 * - `closed`: a websocket closed abnormally.
 */
export type TransportFailure = 'connect' | 'reset' | 'timeout' | 'bad-response' | 'closed';

export class LedgerTransportError extends LedgerbotError {
  readonly failure: TransportFailure;
  /** HTTP status when the server answered something unreadable. */
  readonly status: number | undefined;
  /** "METHOD /path" of the call; never contains a token or a query secret. */
  readonly request: string;

  constructor(
    failure: TransportFailure,
    request: string,
    message: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(`LEDGER_TRANSPORT_${failure.toUpperCase().replace('-', '_')}`, message, options);
    this.failure = failure;
    this.request = request;
    this.status = options?.status;
  }
}
