import { systemClock, type Clock } from '../core/clock.js';
import { formatDuration } from '../core/duration.js';
import { LedgerbotError } from '../core/ledgerbot-error.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { systemRandom, type Random } from '../core/random.js';
import { classify } from '../ledger/classify.js';
import { STARTUP_BACKOFF } from './await-participant.js';
import { retryOnClock } from './retry-on-clock.js';

export type RetryPackagesReadOptions = {
  /** Give up after this long (`ledger.startTimeout`); absent: until `signal` aborts. */
  readonly timeoutMs?: number;
  /** Aborts the wait (the bot is stopped while it waits): rejects with the last failure. */
  readonly signal?: AbortSignal;
  /** Told why the bot waits before each pause, and undefined once the read succeeded. */
  readonly onWaiting?: (reason: string | undefined) => void;
  readonly clock?: Clock;
  readonly random?: Random;
  readonly logger?: Logger;
};

/**
 * Whether a failure to read the participant's packages may pass by itself: the participant was
 * unreachable, answered 429/502/503/504 or a retryable Canton error while listing or
 * downloading. A package whose bytes do not hash to its id, or a refusal, is final.
 */
export function isTransientPackagesFailure(error: unknown): boolean {
  if (!(error instanceof LedgerbotError) || error.code !== 'PACKAGES_UNREADABLE') return false;
  const c = classify(error.cause);
  return c === 'retryable' || c === 'unknown-outcome';
}

/**
 * Runs `read` (which reads the participant's packages) until it succeeds, retrying transient
 * failures with backoff, so that a participant that answered once but stumbles while the bot
 * reads its packages at start (a restart, a proxy's 503) does not make `run` exit: the start
 * waits as it waits for the participant itself, for up to `timeoutMs`. A final failure, or the
 * last one when the time is up or `signal` aborts, rejects.
 */
export async function retryPackagesRead<T>(
  read: () => Promise<T>,
  options: RetryPackagesReadOptions = {},
): Promise<T> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const started = clock.now();
  const signal = options.signal ?? new AbortController().signal;
  const result = await retryOnClock(read, {
    timing: { clock, random: options.random ?? systemRandom, restartBackoff: STARTUP_BACKOFF },
    signal,
    retryable: (error) =>
      isTransientPackagesFailure(error) &&
      (options.timeoutMs === undefined || clock.now() - started < options.timeoutMs),
    onRetry: (error, { delayMs }) => {
      const reason = `${error.message}; trying again in ${formatDuration(delayMs)}`;
      options.onWaiting?.(reason);
      logger.warn(
        { error: error.message, retryInMs: delayMs },
        "cannot read the participant's packages yet; retrying",
      );
    },
  });
  options.onWaiting?.(undefined);
  return result;
}
