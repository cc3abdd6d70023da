import type { Dispatcher } from 'undici';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Random } from '../core/random.js';
import type { AuthProvider } from './auth/auth-provider.js';

/** TLS settings for https/wss participants. Paths are read once when the client is created. */
export type TlsOptions = {
  /** PEM file with the CA(s) that signed the participant's certificate. */
  readonly caFile?: string;
  /** PEM client certificate and key, for mutual TLS. */
  readonly certFile?: string;
  readonly keyFile?: string;
  /** Default true. Turning it off is for local experiments only. */
  readonly rejectUnauthorized?: boolean;
};

/** How to reach one participant's JSON Ledger API. Shared by the HTTP client and the streams. */
export type LedgerConnectionOptions = {
  /** Base URL, e.g. http://127.0.0.1:7575 or https://host/path-prefix (no trailing slash needed). */
  readonly url: string;
  /** Bearer token source; none when omitted. */
  readonly auth?: AuthProvider;
  readonly tls?: TlsOptions;
  /** Per-call timeout for plain HTTP calls, in ms (default 30 000). Streams are not bounded by it. */
  readonly requestTimeoutMs?: number;
  /**
   * Every websocket the client opens (updates, completions, active contracts) sends a ping this
   * often, in ms (default 25 000; 0 disables). Canton closes a websocket that carried no frame
   * either way for 60 s, and a quiet ledger sends none.
   */
  readonly pingIntervalMs?: number;
  readonly clock?: Clock;
  readonly random?: Random;
  readonly logger?: Logger;
  /** An undici Dispatcher to use instead of the client's own pooled Agent (tests pass a MockAgent). */
  readonly dispatcher?: Dispatcher;
};
