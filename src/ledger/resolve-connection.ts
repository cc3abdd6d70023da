import { systemClock, type Clock } from '../core/clock.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { systemRandom, type Random } from '../core/random.js';
import type { AuthProvider } from './auth/auth-provider.js';
import type { LedgerConnectionOptions, TlsOptions } from './ledger-connection.js';
import { LedgerUsageError } from './ledger-usage-error.js';
import { parseHttpUrl } from './parse-http-url.js';

/** The connection settings with defaults filled in. Holds no token or key material. */
export type ResolvedLedgerConnection = {
  /** Base URL without a trailing slash. */
  readonly url: string;
  readonly auth: AuthProvider | undefined;
  readonly tls: TlsOptions | undefined;
  readonly requestTimeoutMs: number;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
};

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/**
 * The connection options checked (an http(s) URL without credentials, positive timeouts), with
 * the defaults filled in. Throws LedgerUsageError saying what to fix.
 */
export function resolveConnection(options: LedgerConnectionOptions): ResolvedLedgerConnection {
  const checked = parseHttpUrl(options.url);
  if (!checked.ok) {
    throw new LedgerUsageError(
      checked.problem === 'not-a-url'
        ? 'The ledger URL is not a valid URL; expected e.g. http://127.0.0.1:7575.'
        : `The ledger URL must start with http:// or https://, not ${checked.protocol}//.`,
    );
  }
  const parsed = checked.url;
  if (checked.hasCredentials) {
    // Credentials in a URL end up in logs; tokens go through an AuthProvider.
    throw new LedgerUsageError(
      'The ledger URL must not contain credentials; configure an auth provider instead.',
    );
  }
  const timeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (!Number.isFinite(timeout) || timeout <= 0) {
    throw new LedgerUsageError('requestTimeoutMs must be a positive number.');
  }
  const ping = options.pingIntervalMs;
  if (ping !== undefined && (!Number.isFinite(ping) || ping < 0)) {
    throw new LedgerUsageError('pingIntervalMs must be a number of ms, 0 or more (0: no pings).');
  }
  return Object.freeze({
    url: parsed.origin + parsed.pathname.replace(/\/+$/, ''),
    auth: options.auth,
    tls: options.tls,
    requestTimeoutMs: timeout,
    clock: options.clock ?? systemClock,
    random: options.random ?? systemRandom,
    logger: options.logger ?? silentLogger,
  });
}
