import { AbortError, throwIfAborted } from '../core/abort-error.js';
import { backoffDelay, type BackoffPolicy } from '../core/backoff.js';
import { systemClock, type Clock } from '../core/clock.js';
import { formatDuration } from '../core/duration.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { systemRandom, type Random } from '../core/random.js';
import { AuthError } from '../ledger/auth/auth-error.js';
import { classify } from '../ledger/classify.js';
import { hasLedgerErrorCode, isAuthRejection } from '../ledger/error-checks.js';
import type { CallOptions } from '../ledger/http-transport.js';
import { LedgerApiError } from '../ledger/ledger-api-error.js';
import { LedgerTransportError } from '../ledger/ledger-transport-error.js';
import { RuntimeError } from './runtime-error.js';

/** The two calls that tell whether the participant answers and knows the bot's user. */
export type ParticipantProbe = {
  ledgerEnd(options?: CallOptions): Promise<number>;
  getUser(userId: string, options?: CallOptions): Promise<unknown>;
};

export type AwaitParticipantOptions = {
  readonly ledger: ParticipantProbe;
  readonly userId: string;
  /**
   * Whether to read the user's record too (default true). A participant without auth checks no
   * user (any userId goes), so the CLI looks the user up only when `ledger.auth` is set.
   */
  readonly checkUser?: boolean;
  /** For messages: where the participant is (never holds a secret). */
  readonly url: string;
  /** Give up after this long (`ledger.startTimeout`); absent: wait until `signal` aborts. */
  readonly timeoutMs?: number;
  /** Aborts the wait (the bot is stopped while it waits): rejects with AbortError. */
  readonly signal?: AbortSignal;
  /** Called with why the bot waits before each pause, and with undefined once it answered. */
  readonly onWaiting?: (reason: string | undefined) => void;
  readonly backoff?: BackoffPolicy;
  /** Per attempt (default 10 s). */
  readonly attemptTimeoutMs?: number;
  readonly clock?: Clock;
  readonly random?: Random;
  readonly logger?: Logger;
};

/** How `run` waits at start for the participant, then for its packages: 0.5 s doubling to 30 s. */
export const STARTUP_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000 };

/** What a failed probe means at start: wait and try again, or stop with this error. */
type Verdict = { readonly retry: true } | { readonly retry: false; readonly error: unknown };

/**
 * Waits until the participant answers: it reads the ledger end and the bot's user record. A
 * participant that cannot be reached (refused, DNS, TLS handshake, timeout), answers 408, 429,
 * 502, 503 or 504, or a retryable Canton error (UNAVAILABLE while it starts) is tried again
 * with jittered exponential backoff (0.5 s doubling to 30 s), logged at every attempt, until it
 * answers, `timeoutMs` passes (RuntimeError PARTICIPANT_UNREACHABLE) or `signal` aborts
 * (AbortError). What retrying cannot fix fails at once: an unknown user (UNKNOWN_USER), a
 * rejected token or missing rights, a token endpoint that refuses the credentials, any other
 * final answer (PARTICIPANT_REFUSED).
 */
export async function awaitParticipant(options: AwaitParticipantOptions): Promise<void> {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? systemRandom;
  const log = (options.logger ?? silentLogger).child({ component: 'ledger' });
  const policy = options.backoff ?? STARTUP_BACKOFF;
  const { signal, url, userId } = options;
  const startedAt = clock.now();
  const deadline = options.timeoutMs === undefined ? undefined : startedAt + options.timeoutMs;
  for (let attempt = 1; ; attempt++) {
    throwIfAborted(signal);
    const call = {
      timeoutMs: options.attemptTimeoutMs ?? 10_000,
      ...(signal === undefined ? {} : { signal }),
    };
    let failure: unknown;
    try {
      await options.ledger.ledgerEnd(call);
      if (options.checkUser !== false) await options.ledger.getUser(userId, call);
      if (attempt > 1) {
        log.info(
          { url, attempts: attempt, waitedMs: clock.now() - startedAt },
          'the participant answers; starting',
        );
      }
      options.onWaiting?.(undefined);
      return;
    } catch (err) {
      if (signal?.aborted === true) throw new AbortError(undefined, { cause: signal.reason });
      failure = err;
    }
    const verdict = startupVerdict(failure, userId, url);
    if (!verdict.retry) throw verdict.error;
    const detail = describe(failure);
    const now = clock.now();
    if (deadline !== undefined && now >= deadline) {
      throw new RuntimeError(
        'PARTICIPANT_UNREACHABLE',
        `the participant at ${url} did not answer within ${formatDuration(options.timeoutMs!)} ` +
          `(ledger.startTimeout; ${attempt} attempt(s)); last error: ${detail}`,
        { cause: failure },
      );
    }
    const delay = Math.min(
      backoffDelay(policy, attempt - 1, random),
      deadline === undefined ? Infinity : deadline - now,
    );
    const reason = `waiting for the participant at ${url} (attempt ${attempt} failed: ${detail})`;
    options.onWaiting?.(reason);
    log.warn(
      { url, attempt, retryInMs: delay, error: detail, waitedMs: now - startedAt },
      'the participant does not answer; retrying',
    );
    await clock.sleep(delay, signal);
  }
}

/** Whether a failed start-up probe is worth another attempt, or the error to stop with. */
function startupVerdict(err: unknown, userId: string, url: string): Verdict {
  const refused = (what: string): Verdict => ({
    retry: false,
    error: new RuntimeError(
      'PARTICIPANT_REFUSED',
      `the participant at ${url} refused the bot: ${what}`,
      { cause: err },
    ),
  });
  if (err instanceof LedgerTransportError) {
    // Not reached, no answer, or an unreadable one from a proxy or a participant still starting
    // (408, 429, 502, 503, 504): not final. Anything else unreadable is a wrong URL.
    if (classify(err) !== 'final') return { retry: true };
    return refused(`${err.message} (is ledger.url right?)`);
  }
  if (err instanceof AuthError) {
    return err.retryable ? { retry: true } : refused(`${err.message} (check ledger.auth)`);
  }
  if (err instanceof LedgerApiError) {
    if (hasLedgerErrorCode(err, 'USER_NOT_FOUND')) {
      return {
        retry: false,
        error: new RuntimeError(
          'UNKNOWN_USER',
          `the participant at ${url} has no user "${userId}": ledger.userId must name an existing Ledger API user`,
          { cause: err },
        ),
      };
    }
    if (isAuthRejection(err)) {
      return refused(`${err.message} (check ledger.auth and the user's rights)`);
    }
    const c = classify(err);
    if (c === 'retryable' || c === 'unknown-outcome') return { retry: true };
    return refused(err.message);
  }
  // Anything else is not the participant's answer (a bug, a TLS file gone): not retried.
  return { retry: false, error: err };
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
