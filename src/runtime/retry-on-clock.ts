import pRetry from 'p-retry';
import { backoffDelay, type BackoffPolicy } from '../core/backoff.js';
import type { Clock } from '../core/clock.js';
import type { Random } from '../core/random.js';

/** How the bot's retry loops wait: the injected clock and randomness, the backoff between tries. */
export type RetryTiming = {
  readonly clock: Clock;
  readonly random: Random;
  readonly restartBackoff: BackoffPolicy;
};

export type RetryOnClockOptions = {
  /** How to wait (the deps of the caller, which hold these fields, will do). */
  readonly timing: RetryTiming;
  /** Stops the retries: a wait is cut short, and the last failure (or an AbortError) rejects. */
  readonly signal: AbortSignal;
  /** Whether a failure is worth another try; false rejects with it at once. Default: all are. */
  readonly retryable?: (error: Error) => boolean;
  /**
   * The backoff step of the next wait, from 0. Default: the failures so far. A stream follower
   * passes its own count, which progress resets.
   */
  readonly step?: () => number;
  /** Told before each wait, for the log line. */
  readonly onRetry?: (
    error: Error,
    wait: { readonly step: number; readonly delayMs: number },
  ) => void;
};

/**
 * Runs `fn` until it resolves, retrying failures with backoff until `signal` aborts: p-retry
 * runs the attempts (the abort signal, which failures retry; a TypeError that is not a network
 * error is a bug and is not retried), and the wait between two attempts is `backoffDelay` with
 * the injected Random, slept on the injected Clock (p-retry's own wait would use Math.random and
 * real timers, which a FakeClock cannot drive; its `minTimeout` is 0 here, so it adds none).
 */
export function retryOnClock<T>(
  fn: (attempt: number) => Promise<T>,
  options: RetryOnClockOptions,
): Promise<T> {
  const { signal } = options;
  return pRetry(fn, {
    retries: Number.POSITIVE_INFINITY,
    signal,
    minTimeout: 0,
    shouldRetry: async ({ error, retriesConsumed }) => {
      // Stopping: no "retrying" line and no wait; the failure rejects and the caller sees the abort.
      if (signal.aborted) return false;
      if (options.retryable !== undefined && !options.retryable(error)) return false;
      const step = options.step?.() ?? retriesConsumed;
      const { clock, random, restartBackoff } = options.timing;
      const delayMs = backoffDelay(restartBackoff, step, random);
      options.onRetry?.(error, { step, delayMs });
      await clock.sleep(delayMs, signal);
      return true;
    },
  });
}
