import type { AttemptRecord, IntentRecord, SlotRecord } from './store.js';

/**
 * One intent with everything the journal holds of it, store-neutral: what `ledgerbot state
 * export` writes and `state import` restores, whatever store either side uses.
 */
export type JournalIntentRow<P = unknown> = {
  /** State, attempts, payload, errors, deadlines, completion: the record as the store reads it. */
  readonly intent: IntentRecord<P>;
  /** The triggering event recorded with the intent (`NewIntent.event`); absent when none was. */
  readonly event?: unknown;
  /** The attempts the journal keeps (`Store.getAttempts`), oldest first; empty before the first. */
  readonly attemptLog: readonly AttemptRecord[];
  /** Set for a dead-lettered intent: what its dead-letter record holds. */
  readonly deadLetter?: {
    readonly error: unknown;
    readonly event?: unknown;
    readonly deadLetteredAt: number;
  };
};

/** One rule's checkpoint in a fleet's schema. */
export type RuleCheckpoint = {
  readonly ruleId: string;
  readonly checkpoint: number;
  readonly processedOffset?: number;
};

/** A whole journal, store-neutral. */
export type JournalContents<P = unknown> = {
  /** The resume offset (`Store.checkpoint`); absent before the first. */
  readonly checkpoint?: number;
  /** The highest offset declared processed (`advanceCheckpoint`); absent before the first. */
  readonly processedOffset?: number;
  /**
   * A fleet's checkpoints, one per rule that has one (a fleet keeps no other); `checkpoint` is
   * then the earliest of them, which is what a store with one checkpoint (a single bot) resumes
   * from. Absent for a single bot's journal.
   */
  readonly ruleCheckpoints?: readonly RuleCheckpoint[];
  /** In the order `listIntents` has them: oldest justifying offset first. */
  readonly intents: readonly JournalIntentRow<P>[];
  /** By rule id. */
  readonly slots: readonly SlotRecord[];
};

/**
 * Moving a whole journal out of a store and into another (a backup, a move to another store):
 * each store implements it over its own tables.
 */
export interface JournalTransfer {
  /**
   * The whole journal, read in one snapshot: consistent while another process (a running bot)
   * writes the store.
   */
  exportJournal(): Promise<JournalContents>;
  /**
   * Writes `journal` into this store in one transaction: all of it or, if anything fails,
   * nothing. Refuses (StoreError STORE_NOT_EMPTY) a store that holds any intent, slot record or
   * checkpoint, and (STORE_BAD_ARGUMENT) a journal that names an intent twice.
   */
  importJournal(journal: JournalContents): Promise<void>;
}
