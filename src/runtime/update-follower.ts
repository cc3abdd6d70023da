import type { BackoffPolicy } from '../core/backoff.js';
import type { Logger } from '../core/logger.js';
import type { StreamOptions } from '../ledger/ws/stream-context.js';
import type { UpdateElement } from '../ledger/ws/update-stream.js';
import type { RuleIndex } from '../rules/rule-index.js';
import type { BotEvents } from './bot-events.js';
import type { BotLedger } from './bot-ledger.js';
import type { BotMetrics } from './bot-metrics.js';
import type { Checkpoint } from './checkpoint.js';
import { StreamFollower, type StreamFollowerOptions } from './follow-stream.js';
import type { RetryTiming } from './retry-on-clock.js';
import type { SubscriptionPlan } from './subscription-plan.js';
import type { TransactionIngest } from './transaction-ingest.js';

/** What both stream followers of the bot share. */
export type FollowerDeps = RetryTiming & {
  /** The client's websocket reconnect backoff; undefined: the client's default. */
  readonly streamBackoff: BackoffPolicy | undefined;
  readonly logger: Logger;
  readonly metrics: BotMetrics;
};

/** What a follower of the bot adds to the stream follower's own options. */
export type FollowerParts<E extends { readonly offset: number }> = Omit<
  StreamFollowerOptions<E>,
  keyof RetryTiming | 'name' | 'signal' | 'logger' | 'open'
> & {
  /**
   * The stream after `from`, opened with `options` (the follower's signal, reconnect counts,
   * connection metrics, the client's backoff); undefined: nothing to follow yet.
   */
  open(from: number, options: StreamOptions): AsyncIterable<E> | undefined;
};

/**
 * The stream follower of one of the bot's long-lived streams: its timing, logger and stop from
 * `deps`, and every stream it opens counted in `deps.metrics` under `name`.
 */
export function botStreamFollower<E extends { readonly offset: number }>(
  name: 'updates' | 'completions',
  deps: FollowerDeps & { readonly signal: AbortSignal },
  parts: FollowerParts<E>,
): StreamFollower<E> {
  const { metrics } = deps;
  return new StreamFollower<E>({
    ...parts,
    name,
    signal: deps.signal,
    clock: deps.clock,
    random: deps.random,
    restartBackoff: deps.restartBackoff,
    logger: deps.logger,
    onAuthFailure: (error) => metrics.streamFailed(name, error),
    open: (from, signal) =>
      parts.open(from, {
        signal,
        onReconnect: (_attempt, _delayMs, error) => {
          metrics.reconnects[name] += 1;
          if (error !== undefined) metrics.streamFailed(name, error);
        },
        onOpen: () => metrics.streamOpened(name),
        onClose: () => metrics.streamClosed(name),
        backoff: deps.streamBackoff,
      }),
  });
}

export type UpdateFollowerDeps = FollowerDeps & {
  readonly ledger: Pick<BotLedger, 'updates' | 'ledgerEnd'>;
  /** Intake: the follower ends when it aborts. */
  readonly signal: AbortSignal;
  readonly events: BotEvents;
  /** The subscription in effect (a reload swaps it). */
  readonly plan: () => SubscriptionPlan;
  /** The rules the live stream is evaluated with. */
  /** The rules to evaluate the transaction at an offset with (see RuleBook.indexAt). */
  readonly index: (offset: number) => RuleIndex;
  readonly ingest: TransactionIngest;
  readonly checkpoint: Checkpoint;
  /** The stream was refused as pruned: recover, and return where to resume. */
  readonly recover: (from: number, error: unknown) => Promise<number>;
};

/**
 * Follows the updates stream with the subscription's filter and takes every element through the
 * ingest (evaluate, record, admit), one at a time; this is where backpressure reaches the socket.
 */
export class UpdateFollower {
  readonly #d: UpdateFollowerDeps;
  readonly #follower: StreamFollower<UpdateElement>;

  constructor(deps: UpdateFollowerDeps) {
    this.#d = deps;
    this.#follower = botStreamFollower<UpdateElement>('updates', deps, {
      open: (from, options) => {
        const format = deps.plan().updateFormat;
        // Schedule rules only: nothing to read until a reload adds event rules.
        if (format === null) return undefined;
        return deps.ledger.updates({ beginExclusive: from, updateFormat: format }, options);
      },
      handle: (element) => this.#ingest(element),
      // Event rules added by a reload start at the ledger end of that moment, not at the events
      // before they existed.
      afterIdle: async (from, signal) => {
        if (deps.plan().updateFormat === null) return from;
        const end = await deps.ledger.ledgerEnd({ signal });
        deps.checkpoint.evaluatedThrough = end;
        return end;
      },
      onPruned: (from, error) => deps.recover(from, error),
    });
  }

  /** Resolves at the stop; rejects when the stream fails for good. */
  run(begin: number): Promise<void> {
    return this.#follower.run(begin);
  }

  /** The filter changed: reopen after the last element processed. */
  resubscribe(): void {
    this.#follower.restart('resubscribing with the new filter');
  }

  async #ingest(element: UpdateElement): Promise<void> {
    const { checkpoint } = this.#d;
    // Set in the same synchronous run as the evaluation: a pause, resume or reload (which are
    // synchronous too) always falls between two elements.
    checkpoint.evaluatedThrough = element.offset;
    if (element.kind === 'transaction') {
      await this.#d.ingest.ingest(element.transaction, element.offset, {
        index: this.#d.index(element.offset),
        live: true,
      });
    } else {
      // Checkpoints (and updates the rules do not read) move the low-watermark on.
      checkpoint.advance(element.offset);
    }
    checkpoint.lastProcessed = element.offset;
    this.#d.metrics.lastOffset = element.offset;
    this.#d.events.emit('offset', element.offset);
  }
}
