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

  /**
   * One compaction now; the number of intents deleted (0 if the store refused). A store that
   * compacts asynchronously (PostgreSQL) is not waited for: 0, and the log line comes when it is
   * done.
   */
  compactNow(): number {
    try {
      const store = this.#o.store;
      if (store.compactAsync !== undefined) {
        store.compactAsync(this.#o.retentionMs).then(
          (deleted) => this.#compacted(deleted),
          (err: unknown) => this.#failed(err),
        );
        return 0;
      }
      const deleted = store.compact(this.#o.retentionMs);
      this.#compacted(deleted);
      return deleted;
    } catch (err) {
      this.#failed(err);
      return 0;
    }
  }

  #compacted(deleted: number): void {
    if (deleted === 0) return;
    this.#o.logger.info({ deleted, retentionMs: this.#o.retentionMs }, 'journal compacted');
    this.#o.onCompacted?.(deleted);
  }

  /** A failed compaction loses nothing; the next one tries again. */
  #failed(err: unknown): void {
    this.#o.logger.warn(
      { ...errorFields(err), nextInMs: this.#intervalMs },
      'journal compaction failed',
    );
  }

  #tick(): void {
    if (!this.#running) return;
    this.compactNow();
    this.#timer = this.#o.clock.setTimeout(() => this.#tick(), this.#intervalMs);
  }
}
