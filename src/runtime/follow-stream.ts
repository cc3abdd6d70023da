import { AbortError } from '../core/abort-error.js';
import type { Logger } from '../core/logger.js';
import { AuthError } from '../ledger/auth/auth-error.js';
import { isAuthRejection } from '../ledger/error-checks.js';
import { isPrunedDataAccess } from '../ledger/error-checks.js';
import { errorFields } from './error-record.js';
import { retryOnClock, type RetryTiming } from './retry-on-clock.js';
import { RuntimeError } from './runtime-error.js';

/** `restartBackoff` is the wait before reopening after an auth failure. */
export type StreamFollowerOptions<E extends { readonly offset: number }> = RetryTiming & {
  readonly name: 'updates' | 'completions';
  /** Ends the following: `run` then resolves. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /**
   * The stream after `from`, aborted by `signal` (the stop or a `restart`); undefined when there
   * is nothing to follow yet, and the follower waits for a `restart`.
   */
  open(from: number, signal: AbortSignal): AsyncIterable<E> | undefined;
  /** One element; the stream resumes after it when reopened. */
  handle(element: E): Promise<void> | void;
  /** After a wait for something to follow: where to begin (default: where it was). */
  afterIdle?(from: number, signal: AbortSignal): Promise<number>;
  /** The stream was refused as pruned from `from`: where to resume instead. */
  onPruned(from: number, error: unknown): Promise<number>;
  /** Each auth failure it backs off from (for `/readyz`: why the stream is down). */
  onAuthFailure?(error: unknown): void;
};

/**
 * Follows one of the bot's streams until the stop: reopens it after the last element handled when
 * it ends or `restart` is called; on a refused read of pruned offsets, resumes where `onPruned`
 * says; on an auth failure (after the client's own token refresh), reopens with backoff (reset by
 * every element); fails with STREAM_FAILED on anything else, which retrying cannot fix.
 */
export class StreamFollower<E extends { readonly offset: number }> {
  readonly #o: StreamFollowerOptions<E>;
  #restart = new AbortController();

  constructor(options: StreamFollowerOptions<E>) {
    this.#o = options;
  }

  /** Reopens the stream from the last element handled (or wakes a follower with nothing to follow). */
  restart(reason: string): void {
    const current = this.#restart;
    this.#restart = new AbortController();
    current.abort(new AbortError(reason));
  }

  /** Resolves at the stop; rejects with RuntimeError STREAM_FAILED. */
  async run(begin: number): Promise<void> {
    const { signal, name } = this.#o;
    let from = begin;
    let failures = 0;
    const follow = async (): Promise<void> => {
      while (!signal.aborted) {
        const restart = this.#restart.signal;
        const stream = this.#o.open(from, AbortSignal.any([signal, restart]));
        if (stream === undefined) {
          await abortOf(signal, restart);
          if (signal.aborted) return;
          from = (await this.#o.afterIdle?.(from, signal)) ?? from;
          continue;
        }
        try {
          for await (const element of stream) {
            // Restarted: the element is left for the new stream (a reload changed the filter).
            if (restart.aborted) break;
            await this.#o.handle(element);
            from = element.offset;
            failures = 0;
          }
        } catch (err) {
          if (signal.aborted) return;
          if (restart.aborted) continue;
          if (!isPrunedDataAccess(err)) throw err;
          from = await this.#o.onPruned(from, err);
        }
      }
    };
    try {
      await retryOnClock(follow, {
        timing: this.#o,
        signal,
        retryable: isAuthFailure,
        step: () => failures++,
        onRetry: (err, wait) => {
          this.#o.onAuthFailure?.(err);
          this.#o.logger.error(
            {
              stream: name,
              attempt: wait.step + 1,
              delayMs: wait.delayMs,
              hint: 'check the auth config or the token',
              ...errorFields(err),
            },
            'stream credentials refused; retrying',
          );
        },
      });
    } catch (err) {
      if (signal.aborted) return;
      throw new RuntimeError(
        'STREAM_FAILED',
        `the ${name} stream failed: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
  }
}

/** A rejected or missing token, after the client's own one refresh: back off, report, retry. */
function isAuthFailure(err: unknown): boolean {
  return err instanceof AuthError || isAuthRejection(err);
}

function abortOf(...signals: AbortSignal[]): Promise<void> {
  const any = AbortSignal.any(signals);
  return new Promise((resolve) => {
    if (any.aborted) resolve();
    else any.addEventListener('abort', () => resolve(), { once: true });
  });
}
