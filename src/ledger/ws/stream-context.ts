import { readFileSync } from 'node:fs';
import type { BackoffPolicy } from '../../core/backoff.js';
import { systemClock, type Clock } from '../../core/clock.js';
import { LedgerbotError } from '../../core/ledgerbot-error.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { systemRandom, type Random } from '../../core/random.js';
import type { AuthProvider } from '../auth/auth-provider.js';
import type { LedgerConnectionOptions, TlsOptions } from '../ledger-connection.js';
import type { ReconnectListener } from './resumable-stream.js';

/** TLS material for wss connections, read from the files named in TlsOptions. */
export type StreamTls = {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly rejectUnauthorized: boolean;
};

/** Everything the websocket streams need, with defaults filled in. */
export type StreamContext = {
  /** Base URL of the JSON Ledger API (http, https, ws or wss), possibly with a path prefix. */
  readonly url: string;
  readonly auth?: AuthProvider;
  readonly tls?: StreamTls;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
};

/** A TLS file named in the connection options cannot be read. */
export class TlsFileError extends LedgerbotError {
  constructor(what: string, path: string, options?: { cause?: unknown }) {
    super(
      'TLS_FILE_UNREADABLE',
      `cannot read the TLS ${what} file ${path}: check the path and its permissions`,
      options,
    );
  }
}

/**
 * Builds the stream context from the shared connection options. TLS files are read here, once,
 * so a missing file fails at startup rather than on the first reconnect.
 */
export function streamContext(options: LedgerConnectionOptions): StreamContext {
  return {
    url: options.url,
    ...(options.auth === undefined ? {} : { auth: options.auth }),
    ...(options.tls === undefined ? {} : { tls: readTls(options.tls) }),
    clock: options.clock ?? systemClock,
    random: options.random ?? systemRandom,
    logger: options.logger ?? silentLogger,
  };
}

function readTls(tls: TlsOptions): StreamTls {
  return {
    ...(tls.caFile === undefined ? {} : { ca: readPem('CA', tls.caFile) }),
    ...(tls.certFile === undefined ? {} : { cert: readPem('certificate', tls.certFile) }),
    ...(tls.keyFile === undefined ? {} : { key: readPem('key', tls.keyFile) }),
    rejectUnauthorized: tls.rejectUnauthorized ?? true,
  };
}

function readPem(what: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new TlsFileError(what, path, { cause: err });
  }
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
};
