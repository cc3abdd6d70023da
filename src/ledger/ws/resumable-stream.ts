import { AbortError, throwIfAborted } from '../../core/abort-error.js';
import { backoffCeiling, backoffDelay, type BackoffPolicy } from '../../core/backoff.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { Random } from '../../core/random.js';
import { classify, retryDelayHintMs } from '../classify.js';
import { isStreamAuthExpiry, isTokenRejected } from '../error-checks.js';

/** Called before each reconnect; `error` is undefined when the server closed the stream normally. */
export type ReconnectListener = (attempt: number, delayMs: number, error: unknown) => void;

export const DEFAULT_STREAM_BACKOFF: BackoffPolicy = { initialMs: 250, maxMs: 30_000 };

/** A connection that stayed up this long resets the backoff even if nothing arrived on it. */
const DEFAULT_STABLE_AFTER_MS = 30_000;

export type ResumableStreamOptions<T> = {
  /** Names the stream in logs, e.g. "updates". */
  readonly name: string;
  /** Opens one connection that starts after `beginExclusive`. */
  readonly open: (beginExclusive: number, signal: AbortSignal | undefined) => AsyncIterable<T>;
  /** The offset of an element; every element has one (checkpoints included). */
  readonly offsetOf: (element: T) => number;
  readonly beginExclusive: number;
  /**
   * Makes the stream bounded: it ends after an element at or past this offset, or when the
   * server closes normally. Absent, the stream never ends on its own.
   */
  readonly endInclusive?: number | undefined;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly backoff?: BackoffPolicy | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly onReconnect?: ReconnectListener | undefined;
  /** Whether the connection uses a token that a rejection may have expired (default true). */
  readonly retryAuthOnce?: boolean | undefined;
  readonly stableAfterMs?: number | undefined;
};

/**
 * Whether a stream that failed with `err` should be reopened from its last offset. Reading has
 * no side effects, so "unknown outcome" and "in flight" are as good as "retryable" here.
 */
export function reconnectable(err: unknown): boolean {
  if (err instanceof AbortError) return false;
  const c = classify(err);
  return c === 'retryable' || c === 'unknown-outcome' || c === 'in-flight';
}

/**
 * The jittered backoff for `attempt` (from 0), but never shorter than the server asks for. A
 * stream ended for a lapsed token is the exception: its category's 1 s hint is meant for
 * contention, and the fresh token is ready now.
 */
export function reconnectDelay(
  policy: BackoffPolicy,
  attempt: number,
  random: Random,
  err: unknown,
): number {
  const backoff = backoffDelay(policy, attempt, random);
  if (isStreamAuthExpiry(err)) return backoff;
  return Math.max(backoff, retryDelayHintMs(err) ?? 0);
}

/**
 * Logs a reconnect: a warning, except for a stream the participant ended because its token
 * expired or the user's rights changed, which is routine (the token is refreshed) and only info.
 */
export function logReconnect(logger: Logger, fields: Record<string, unknown>, err: unknown): void {
  if (isStreamAuthExpiry(err)) {
    logger.info(fields, 'stream authorization lapsed, reconnecting with a fresh token');
  } else {
    logger.warn(fields, 'stream interrupted, reconnecting');
  }
}

/**
 * Yields the elements of an offset-ordered ledger stream across reconnects. It remembers the
 * offset of the last element of any kind and reopens with `beginExclusive` = that offset after a
 * dropped socket, a retryable error, or a normal close of an open-ended stream (idle timeouts,
 * session limits). Reconnects back off with jitter; the attempt count resets once an element
 * arrives. Errors that retrying cannot fix are thrown to the consumer.
 */
export class ResumableStream<T> implements AsyncIterable<T> {
  readonly #o: ResumableStreamOptions<T>;
  #lastOffset: number;
  #reconnects = 0;

  constructor(options: ResumableStreamOptions<T>) {
    this.#o = options;
    this.#lastOffset = options.beginExclusive;
  }

  /** The offset of the last element yielded (the initial `beginExclusive` before any). */
  get lastOffset(): number {
    return this.#lastOffset;
  }

  /** Reconnects so far, over the life of the stream. */
  get reconnects(): number {
    return this.#reconnects;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return this.#run();
  }

  #reachedEnd(): boolean {
    const end = this.#o.endInclusive;
    return end !== undefined && this.#lastOffset >= end;
  }

  async *#run(): AsyncGenerator<T, void, undefined> {
    const o = this.#o;
    const policy = o.backoff ?? DEFAULT_STREAM_BACKOFF;
    const stableAfterMs = o.stableAfterMs ?? DEFAULT_STABLE_AFTER_MS;
    let attempt = 0;
    let authRetried = false;
    for (;;) {
      throwIfAborted(o.signal);
      if (this.#reachedEnd()) return;
      const openedAt = o.clock.now();
      let failure: { error: unknown } | undefined;
      try {
        for await (const element of o.open(this.#lastOffset, o.signal)) {
          this.#lastOffset = o.offsetOf(element);
          attempt = 0;
          authRetried = false;
          yield element;
          if (this.#reachedEnd()) return;
        }
      } catch (err) {
        if (err instanceof AbortError) throw err;
        throwIfAborted(o.signal);
        failure = { error: err };
      }
      if (failure === undefined) {
        // A bounded stream closes normally after its range, even when the last offset before
        // the end matched none of our filters.
        if (o.endInclusive !== undefined) return;
      } else if (!reconnectable(failure.error)) {
        const retryAuth =
          // A rejected or expired token (401 on the handshake, UNAUTHENTICATED mid-stream): the
          // stream has dropped its cached token, so one fresh try is worth it.
          (o.retryAuthOnce ?? true) && !authRetried && isTokenRejected(failure.error);
        if (!retryAuth) throw failure.error;
        authRetried = true;
      }
      // A connection that stayed up at least as long as the wait before it resets the backoff:
      // a stream dropped every few seconds (a proxy's idle timeout) keeps reconnecting quickly
      // instead of waiting longer each time, while one refused at once still backs off.
      const upMs = o.clock.now() - openedAt;
      if (upMs >= stableAfterMs || (attempt > 0 && upMs >= backoffCeiling(policy, attempt - 1))) {
        attempt = 0;
      }
      const error = failure?.error;
      const delayMs = reconnectDelay(policy, attempt, o.random, error);
      attempt += 1;
      this.#reconnects += 1;
      logReconnect(
        o.logger,
        {
          stream: o.name,
          attempt,
          delayMs,
          offset: this.#lastOffset,
          ...(error === undefined ? { reason: 'closed by the server' } : describeError(error)),
        },
        error,
      );
      o.onReconnect?.(attempt, delayMs, error);
      await o.clock.sleep(delayMs, o.signal);
    }
  }
}

/** Log fields for an error: its stable code and message (both free of tokens by construction). */
export function describeError(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { ...(typeof code === 'string' ? { errorCode: code } : {}), error: err.message };
  }
  return { error: String(err) };
}
