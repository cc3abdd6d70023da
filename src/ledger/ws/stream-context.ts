import type { BackoffPolicy } from '../../core/backoff.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { Random } from '../../core/random.js';
import type { AuthProvider } from '../auth/auth-provider.js';
import { loadTlsMaterial, type TlsMaterial } from '../load-tls-material.js';
import type { LedgerConnectionOptions } from '../ledger-connection.js';
import { resolveConnection } from '../resolve-connection.js';
import type { ReconnectListener } from './resumable-stream.js';
import { DEFAULT_PING_INTERVAL_MS } from './ws-keep-alive.js';

/** Everything the websocket streams need, with defaults filled in. */
export type StreamContext = {
  /** Base URL of the JSON Ledger API (http or https), possibly with a path prefix. */
  readonly url: string;
  readonly auth?: AuthProvider;
  /** CA, client certificate and key for wss, already read from their files. */
  readonly tls?: TlsMaterial;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  /** Websocket ping period in ms; 0 disables; absent: DEFAULT_PING_INTERVAL_MS. */
  readonly pingIntervalMs?: number;
};

/**
 * Builds the stream context from the shared connection options: validates the URL and fills the
 * defaults (system clock and randomness, silent logger) exactly as the HTTP client does, and reads
 * the TLS files unless `tls` passes the material the HTTP client already loaded.
 */
export async function streamContext(
  options: LedgerConnectionOptions,
  tls?: TlsMaterial,
): Promise<StreamContext> {
  const connection = resolveConnection(options);
  // resolveConnection has checked it.
  const pingIntervalMs = options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS;
  const material =
    tls ?? (connection.tls === undefined ? undefined : await loadTlsMaterial(connection.tls));
  return {
    url: connection.url,
    ...(connection.auth === undefined ? {} : { auth: connection.auth }),
    ...(material === undefined ? {} : { tls: material }),
    clock: connection.clock,
    random: connection.random,
    logger: connection.logger,
    pingIntervalMs,
  };
}

/** Per-call options of the resumable streams. */
export type StreamOptions = {
  readonly signal?: AbortSignal | undefined;
  /** Reconnect backoff (default 250 ms doubling to 30 s, with jitter). */
  readonly backoff?: BackoffPolicy | undefined;
  /** Called before each reconnect, e.g. to count reconnects in metrics. */
  readonly onReconnect?: ReconnectListener | undefined;
  /** Frames buffered for a slow consumer before the socket pauses (default 256). */
  readonly highWaterMark?: number | undefined;
  /**
   * Called each time a websocket of the stream opens: the first connect and every reconnect.
   * With `onClose` it tells whether the stream is connected right now, traffic or not.
   */
  readonly onOpen?: (() => void) | undefined;
  /**
   * Called once per websocket that opened, as soon as the stream is over on it, whatever the
   * reason (server close, drop, socket error, error frame, abort, consumer stop): when it fails
   * or starts closing, not when the closing handshake ends. Always after its `onOpen`. A socket
   * that never opened calls neither.
   */
  readonly onClose?: (() => void) | undefined;
};
