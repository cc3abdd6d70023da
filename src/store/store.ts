import type { TriggerKey } from '../core/trigger-key.js';

/**
 * The bot's durable state: the checkpoint, the intent journal, dead letters and schedule slots.
 *
 * The interface is SYNCHRONOUS on purpose. The embedded default is SQLite through better-sqlite3,
 * which is synchronous and fast (a batch of 100 state changes is well under a millisecond of CPU
 * plus one WAL append), and a synchronous `batch(fn)` makes "these changes commit together or not
 * at all" impossible to get wrong: nothing can interleave between the statements of a batch.
 * A remote store would need an async interface; none is planned.
 *
 * The rules the runtime relies on (ARCHITECTURE.md, correctness kernel items 4 and 5):
 * - Every intent moves `pending → submitted → succeeded | duplicate | rejected | dead-lettered`
 *   (see INTENT_TRANSITIONS). A transition not in that table throws IllegalStateError, and a
 *   terminal intent never changes again, except that an operator may requeue a dead letter.
 * - The checkpoint is a low-watermark, see `advanceCheckpoint`.
 * - `batch(fn)` commits everything `fn` did in one transaction, including the checkpoint.
 *
 * `P` is the type of the stored payloads as this store hands them out: `unknown` for a store that
 * returns the JSON as it parsed it, a checked type for one made by `decodingStore`, which checks
 * each payload once as its row is read. Payloads are JSON on disk either way.
 */
export interface Store<P = unknown> {
  /**
   * Runs `fn` in one transaction: all its changes commit together, or none if it throws. Nests.
   * A store opened with group commit commits the batches of one event-loop turn in one
   * transaction, at the end of the turn (or by `flush`): each batch is still all-or-nothing (one
   * that throws is undone alone, as a savepoint would be), and a crash loses at most the last
   * turn's batches, together and in order.
   */
  batch<T>(fn: () => T): T;
  /**
   * Resolves once every change made so far is committed (at once without group commit). Await
   * it before an effect outside the process that the journal must already show, such as a
   * submission. Rejects with STORE_COMMIT_FAILED if that commit failed.
   */
  sync(): Promise<void>;
  /** Commits the open group now (a no-op without group commit). Throws STORE_COMMIT_FAILED. */
  flush(): void;

  // ---- checkpoint ----

  /**
   * The resume offset: the stream restarts with `beginExclusive = checkpoint()`. Undefined until
   * the first `advanceCheckpoint` (then `start: checkpoint` falls back to the ledger end).
   */
  checkpoint(): number | undefined;
  /**
   * Records that every event at or below `processedOffset` has been evaluated and its intents
   * recorded. Call it in the same batch as the `recordIntents` of those events: the checkpoint
   * is recomputed when the outermost batch commits, from the journal as it is then:
   *
   *   checkpoint = max(previous checkpoint,
   *                    min(highest processedOffset so far, lowestOpenEventOffset - 1))
   *
   * where lowestOpenEventOffset is the smallest `offset` above the previous checkpoint of a
   * non-terminal intent with an event trigger. So the checkpoint only passes an event once every
   * intent from it is terminal, and it never moves backwards: an open intent at or below it (a
   * requeued dead letter, or one jumped over by `resetCheckpoint`) is resumed from the journal,
   * not by replaying the stream, and does not hold it. Every batch that changes an intent recomputes it,
   * so the last intent of an event turning terminal moves it without another call. Schedule
   * intents (slot triggers) do not hold it back: the journal and the slot records resume them.
   * Declaring an offset processed before recording its intents (in a later batch) is a bug: the
   * checkpoint may already have passed them.
   */
  advanceCheckpoint(processedOffset: number): void;
  /**
   * Sets the checkpoint to `offset` regardless of open intents, forwards or backwards. Only for
   * when the old offset is unusable (pruned: the runtime restarts from the ACS at the ledger
   * end); open intents stay in the journal and are still resubmitted from there.
   */
  resetCheckpoint(offset: number): void;

  // ---- intent journal ----

  /**
   * Inserts new intents as `pending`. An intent whose commandId is already in the journal (a
   * replay after a restart, or a re-run slot) is left as it is and reported in `existing`.
   */
  recordIntents(intents: readonly NewIntent<P>[]): RecordIntentsResult<P>;
  /**
   * For a store whose memory does not hold its whole journal (PostgreSQL): reads those of
   * `intents` that it may have recorded and dropped from memory (a completed slot run again, an
   * event below the checkpoint), so that a `recordIntents` of them right after finds them and
   * leaves them as they are. Undefined when none needs reading. The runtime awaits it before
   * each `recordIntents`; a store without it finds every recorded intent synchronously.
   */
  lookUpIntents?(intents: readonly NewIntent<P>[]): Promise<void> | undefined;
  /** Applies one state change; throws IllegalStateError if the table forbids it. */
  transition(commandId: string, change: IntentChange): IntentRecord<P>;
  getIntent(commandId: string): IntentRecord<P> | undefined;
  /**
   * Whether the journal holds an intent of `ruleId` with an `event` trigger of the ledger event
   * at `offset` / `nodeId`, in any state. The pruning recovery asks this before firing a rule on
   * a contract of the active contract set: an earlier run may have seen its creation on the
   * stream, under the live commandId.
   */
  hasEventIntent(ruleId: string, offset: number, nodeId: number): boolean;
  /**
   * `hasEventIntent` for every offset, for a store that cannot answer all of them from memory
   * (PostgreSQL keeps no finished intents at or below the checkpoint there, and its
   * `hasEventIntent` throws for them). The pruning recovery awaits it when the store has it.
   */
  hasEventIntentAsync?(ruleId: string, offset: number, nodeId: number): Promise<boolean>;
  /** Non-terminal intents (`pending`, `submitted`), oldest justifying offset first. */
  openIntents(options?: { readonly limit?: number }): IntentRecord<P>[];
  listIntents(query?: IntentQuery): IntentRecord<P>[];
  /**
   * The intent's submission attempts, oldest first (the last MAX_ATTEMPTS_KEPT; `n` counts all
   * of them, across an operator's retries), or undefined for an unknown intent. Kept in the
   * journal with the intent, so they survive a restart.
   */
  getAttempts(commandId: string): AttemptRecord[] | undefined;
  /**
   * The triggering event recorded with the intent (`NewIntent.event`, JSON), or undefined when
   * none was recorded or the intent is unknown. Parsed on each call: for one intent's detail.
   */
  getRecordedEvent(commandId: string): unknown;
  countByState(): Record<IntentState, number>;

  // ---- dead letters ----

  listDeadLetters(options?: { readonly limit?: number; readonly ruleId?: string }): DeadLetter<P>[];
  getDeadLetter(commandId: string): DeadLetter<P> | undefined;
  /**
   * An operator's retry: the dead-lettered intent goes back to `pending` with attempts reset,
   * `nextAttemptAt` now and the given deadline (or none), and leaves the dead-letter list.
   */
  requeueDeadLetter(commandId: string, options?: { readonly deadline?: number }): IntentRecord<P>;
  /** Deletes a dead letter and its intent for good. Returns false if there was none. */
  purgeDeadLetter(commandId: string): boolean;

  // ---- schedule slots ----

  getSlotRecord(ruleId: string): SlotRecord | undefined;
  listSlotRecords(): SlotRecord[];
  /** Marks `slot` (epoch ms) of a rule as in progress, with the ACS snapshot offset if known. */
  beginSlot(ruleId: string, slot: number, snapshotOffset?: number): SlotRecord;
  /** Records `slot` as the last completed one (never moving it back) and clears the marker. */
  completeSlot(ruleId: string, slot: number): SlotRecord;

  // ---- housekeeping ----

  /**
   * Deletes `succeeded`, `duplicate` and `rejected` intents last updated more than `olderThanMs`
   * ago whose event the checkpoint has passed (so a replay can never meet a deleted intent).
   * Dead letters stay until requeued or purged. Returns the number of intents deleted.
   */
  compact(olderThanMs: number): number;
  /**
   * `compact` for a store that deletes in a remote database (PostgreSQL: its `compact` starts the
   * deletion and returns 0): resolves with the number deleted. The compactor prefers it.
   */
  compactAsync?(olderThanMs: number): Promise<number>;
  /** Closes the database. Idempotent; every other call afterwards throws StoreError STORE_CLOSED. */
  close(): void;
}

export type IntentState =
  'pending' | 'submitted' | 'succeeded' | 'duplicate' | 'rejected' | 'dead-lettered';

export const INTENT_STATES: readonly IntentState[] = [
  'pending',
  'submitted',
  'succeeded',
  'duplicate',
  'rejected',
  'dead-lettered',
];

export const TERMINAL_STATES: ReadonlySet<IntentState> = new Set([
  'succeeded',
  'duplicate',
  'rejected',
  'dead-lettered',
]);

/**
 * Allowed moves. `pending` means "waiting for an attempt at `nextAttemptAt`", `submitted` means
 * "an attempt is outstanding". So a retry goes `submitted → pending`, a resubmission after a
 * timeout `submitted → submitted` (new submissionId), and a late completion of an earlier attempt
 * may finish a `pending` intent. Requeueing a dead letter is the one way out of a terminal state
 * and has its own method.
 */
export const INTENT_TRANSITIONS: Readonly<Record<IntentState, readonly IntentState[]>> = {
  pending: ['pending', 'submitted', 'succeeded', 'duplicate', 'rejected', 'dead-lettered'],
  submitted: ['pending', 'submitted', 'succeeded', 'duplicate', 'rejected', 'dead-lettered'],
  succeeded: [],
  duplicate: [],
  rejected: [],
  'dead-lettered': [],
};

export function isTerminal(state: IntentState): boolean {
  return TERMINAL_STATES.has(state);
}

/** What made an intent: see `core/trigger-key.ts` (the rules hash the same key). */
export type { TriggerKey };

/** What an intent is and what it submits: the same in a new intent and in its record. */
export type IntentFacts<P = unknown> = {
  /** The deterministic `lb-<ruleId>-<hash>`; the journal's key. */
  readonly commandId: string;
  /** The change id parts besides commandId: the ledger deduplicates on (userId, actAs, commandId). */
  readonly userId: string;
  /** Stored sorted, whatever order is given. */
  readonly actAs: readonly string[];
  readonly ruleId: string;
  readonly revision: number;
  readonly actionIndex: number;
  readonly trigger: TriggerKey;
  /** The justifying offset: the triggering event's offset, or the ACS snapshot's for a slot. */
  readonly offset: number;
  /**
   * Everything needed to resubmit after a restart without re-evaluating the rule (the JsCommands
   * minus submissionId, say). Must be JSON-serialisable and must not contain secrets.
   */
  readonly payload: P;
};

export type NewIntent<P = unknown> = IntentFacts<P> & {
  /** The triggering event (JSON), kept for the dead-letter record; optional. */
  readonly event?: unknown;
  /** Epoch ms after which the runtime stops retrying and dead-letters the intent. */
  readonly deadline?: number;
  /** Epoch ms of the first attempt; defaults to now. */
  readonly nextAttemptAt?: number;
};

export type IntentRecord<P = unknown> = IntentFacts<P> & {
  readonly state: IntentState;
  /** Submissions made so far (each `→ submitted` counts one). */
  readonly attempts: number;
  readonly submissionId?: string;
  /** The last error (JSON, e.g. a JsCantonError); never contains secrets. */
  readonly lastError?: unknown;
  readonly nextAttemptAt?: number;
  readonly deadline?: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** From the completion, when known. */
  readonly completionOffset?: number;
  readonly completionUpdateId?: string;
  /**
   * Set once an attempt ended without a definite answer (a timeout, a lost response, a
   * resubmission over an outstanding attempt, a restart with an attempt out): that attempt may
   * have committed. Absent while every attempt so far was definitely not committed.
   */
  readonly inDoubt?: true;
};

export type RecordIntentsResult<P = unknown> = {
  readonly inserted: readonly IntentRecord<P>[];
  readonly existing: readonly IntentRecord<P>[];
};

/** One state change, with the facts that go with it. */
export type IntentChange =
  | { readonly to: 'submitted'; readonly submissionId: string }
  | {
      readonly to: 'pending';
      readonly nextAttemptAt: number;
      readonly error?: unknown;
      /**
       * From `submitted`: the attempt that just ended certainly did not commit (a definite
       * rejection). Without it the attempt counts as in doubt (see `IntentRecord.inDoubt`).
       */
      readonly definite?: boolean;
    }
  | {
      readonly to: 'succeeded' | 'duplicate';
      readonly completionOffset?: number;
      readonly updateId?: string;
    }
  | { readonly to: 'rejected'; readonly error: unknown; readonly completionOffset?: number }
  | {
      readonly to: 'dead-lettered';
      readonly error: unknown;
      /** The triggering event; defaults to the one given to `recordIntents`. */
      readonly event?: unknown;
    };

/** How a submission attempt ended; `pending`: no answer yet. */
export type AttemptOutcome =
  'pending' | 'succeeded' | 'duplicate' | 'rejected' | 'retry' | 'in-doubt' | 'dead-lettered';

/** One submission attempt of an intent. */
export type AttemptRecord = {
  /** 1 for the intent's first attempt. */
  readonly n: number;
  readonly submissionId: string;
  /** Epoch ms it was submitted. */
  readonly at: number;
  readonly outcome: AttemptOutcome;
  /** Why it failed (retry, in-doubt with an error, rejected, dead-lettered). */
  readonly error?: { readonly code: string; readonly message: string };
};

export type IntentQuery = {
  readonly states?: readonly IntentState[];
  readonly ruleId?: string;
  readonly limit?: number;
  /**
   * `offset` (default): oldest justifying offset first. `recent`: the latest change first (by
   * `updatedAt`, then `commandId`, both descending), as the ops API lists intents.
   */
  readonly order?: 'offset' | 'recent';
  /** With order `recent`: only intents after this one in that order (the previous page's last). */
  readonly before?: { readonly updatedAt: number; readonly commandId: string };
};

export type DeadLetter<P = unknown> = {
  readonly intent: IntentRecord<P>;
  readonly error: unknown;
  readonly event?: unknown;
  readonly deadLetteredAt: number;
};

export type SlotRecord = {
  readonly ruleId: string;
  /** Epoch ms of the last slot whose intents were all recorded, or undefined. */
  readonly lastCompletedSlot?: number;
  /** The slot being worked on (a crash leaves it set, so the next start re-runs it). */
  readonly inProgressSlot?: number;
  readonly inProgressSince?: number;
  readonly snapshotOffset?: number;
};
