import type { Logger } from '../core/logger.js';
import type { Store } from '../store/store.js';
import type { StartPosition } from './config/bot-config.js';
import { errorFields } from './error-record.js';
import { startOffsetOf } from './start-offset.js';

export type CheckpointOptions = {
  readonly store: Store;
  /** False for a shadow bot: it follows the positions but moves nothing in the store. */
  readonly writes: boolean;
  readonly logger: Logger;
  /** The offset the checkpoint is held at (the earliest current pause), if any. */
  readonly heldAt: () => number | undefined;
};

/**
 * The only code that moves the stored checkpoint, and the bot's positions on the updates stream.
 * The checkpoint is a low-watermark: `advance` declares an offset processed, and the store moves
 * the checkpoint past an event only once every intent of it is terminal (Store.advanceCheckpoint).
 * A hold (a paused rule, `heldAt`) keeps it at or below the hold's offset.
 */
export class Checkpoint {
  readonly #o: CheckpointOptions;
  /** The offset of the last stream element evaluated (set in the same run as the evaluation). */
  evaluatedThrough: number | undefined;
  /** The last element of the updates stream processed (its intents recorded). */
  lastProcessed: number | undefined;

  constructor(options: CheckpointOptions) {
    this.#o = options;
  }

  /** The stored checkpoint; undefined before the first, or once the store is closed. */
  stored(): number | undefined {
    try {
      return this.#o.store.checkpoint();
    } catch {
      return undefined; // closed
    }
  }

  /**
   * Where the updates stream begins (see startOffsetOf): the stored checkpoint, else (or with
   * `reset`) `start`. A start that did not come from the checkpoint is stored as the checkpoint
   * at once, so a restart before any event resumes there (not at a newer ledger end, nor at the
   * checkpoint a reset replaced).
   */
  begin(start: StartPosition, ledgerEnd: number, reset: boolean): number {
    const decision = startOffsetOf(start, this.stored(), ledgerEnd, reset);
    if (decision.from !== 'checkpoint') this.reset(decision.offset);
    if (decision.from === 'reset') {
      this.#o.logger.warn(
        { previousCheckpoint: decision.previous, startOffset: decision.offset, start },
        'checkpoint reset',
      );
    }
    this.evaluatedThrough = decision.offset;
    return decision.offset;
  }

  /**
   * Declares `offset` processed, inside the caller's store batch (the one that records its
   * intents: write-ahead, they commit together).
   */
  advanceInBatch(offset: number): void {
    if (!this.#o.writes) return;
    const held = this.#o.heldAt();
    this.#o.store.advanceCheckpoint(held === undefined ? offset : Math.min(offset, held));
  }

  /** Declares `offset` processed, in a batch of its own (an element without intents). */
  advance(offset: number): void {
    if (!this.#o.writes) return;
    this.#o.store.batch(() => this.advanceInBatch(offset));
  }

  /** Declares the last processed offset again (at stop, or once a hold is released); never throws. */
  save(): void {
    const offset = this.lastProcessed;
    if (offset === undefined) return;
    try {
      this.advance(offset);
    } catch (err) {
      this.#o.logger.warn({ offset, ...errorFields(err) }, 'cannot save the checkpoint');
    }
  }

  /**
   * Sets the checkpoint to `offset` whatever the open intents (a start that did not come from the
   * checkpoint, a pruning recovery); the positions move there too when `positions`.
   */
  reset(offset: number, options: { readonly positions?: boolean } = {}): void {
    if (this.#o.writes) this.#o.store.resetCheckpoint(offset);
    if (options.positions === true) {
      this.lastProcessed = offset;
      this.evaluatedThrough = offset;
    }
  }
}
