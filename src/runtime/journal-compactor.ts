import type { Clock, TimerHandle } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Store } from '../store/store.js';
import { errorFields } from './error-record.js';

const MAX_INTERVAL_MS = 3600_000;
const MIN_INTERVAL_MS = 1_000;

export type JournalCompactorOptions = {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Finished intents last changed longer ago than this are deleted. */
  readonly retentionMs: number;
  readonly onCompacted?: (deleted: number) => void;
};

/**
 * Keeps the journal small while the bot runs: at start, then every quarter of the retention
 * window (at most hourly), deletes the succeeded, duplicate and rejected intents older than the
 * window whose events the checkpoint has passed (Store.compact: a replay can never meet them).
 * Dead letters stay until an operator retries or drops them.
 */
export class JournalCompactor {
  readonly #o: JournalCompactorOptions;
  readonly #intervalMs: number;
  #timer: TimerHandle | undefined;
  #running = false;

  constructor(options: JournalCompactorOptions) {
    this.#o = options;
    this.#intervalMs = Math.min(
      MAX_INTERVAL_MS,
      Math.max(MIN_INTERVAL_MS, Math.floor(options.retentionMs / 4)),
    );
  }

  get intervalMs(): number {
    return this.#intervalMs;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#tick();
  }

  stop(): void {
    this.#running = false;
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** One compaction now; the number of intents deleted (0 if the store refused). */
  compactNow(): number {
    try {
      const deleted = this.#o.store.compact(this.#o.retentionMs);
      if (deleted > 0) {
        this.#o.logger.info({ deleted, retentionMs: this.#o.retentionMs }, 'journal compacted');
        this.#o.onCompacted?.(deleted);
      }
      return deleted;
    } catch (err) {
      // A failed compaction loses nothing; the next one tries again.
      this.#o.logger.warn(
        { ...errorFields(err), nextInMs: this.#intervalMs },
        'journal compaction failed',
      );
      return 0;
    }
  }

  #tick(): void {
    if (!this.#running) return;
    this.compactNow();
    this.#timer = this.#o.clock.setTimeout(() => this.#tick(), this.#intervalMs);
  }
}
