import { AbortError } from '../core/abort-error.js';
import { backoffDelay } from '../core/backoff.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Random } from '../core/random.js';
import { retryDelayHintMs } from '../ledger/classify.js';
import { completionError } from '../ledger/completion-status.js';
import { LedgerApiError } from '../ledger/ledger-api-error.js';
import type { Completion } from '../ledger/wire/wire-types.js';
import type { DedupConfig } from './config/bot-config.js';
import type { IntentChange, IntentRecord, IntentState, Store } from '../store/store.js';
import type { Permit } from './admission.js';
import type { BotLedger } from './bot-ledger.js';
import type { BotMetrics } from './bot-metrics.js';
import {
  classifyForSubmission,
  completionOffsetOf,
  isDefinite,
} from './classify-for-submission.js';
import {
  contractIdsToCheck,
  earlierCommitUnknown,
  findEarlierCommit,
  lostToPruning,
  type EarlierCommit,
} from './earlier-commit.js';
import { errorFields, errorRecord, errorRecordOf, type ErrorRecord } from './error-record.js';
import { intentFields, logIntent } from './intent-log.js';
import {
  buildSubmission,
  parsePayload,
  type DedupChoice,
  type SubmissionPayload,
} from './submission-payload.js';
import type { TokenBucket } from './token-bucket.js';
import {
  completionsPruned,
  findCommittedCompletion,
  type CompletionLookup,
} from './completion-lookup.js';
import { prunedUpTo } from './prune-recovery.js';
import {
  INTERNAL_ERROR_CODE,
  isInternalSubmitError,
  UNREADABLE_VALUES_ATTEMPTS,
  unreadableValuesError,
} from './unreadable-values.js';

export { classifyForSubmission } from './classify-for-submission.js';
export { intentFields, logIntent } from './intent-log.js';

export const SUBMIT_REQUEST = 'POST /v2/commands/async/submit';

/** Codes that say the offset-anchored dedup period is unusable: fall back to a duration. */
const DEDUP_FALLBACK_CODES: ReadonlySet<string> = new Set([
  'INVALID_DEDUPLICATION_PERIOD',
  'PARTICIPANT_PRUNED_DATA_ACCESSED',
]);

/** One intent state change, as logged and emitted. */
export type IntentEvent = {
  readonly commandId: string;
  readonly ruleId: string;
  readonly from: IntentState | null;
  readonly to: IntentState;
  readonly record: IntentRecord;
  /** The error behind a retry, rejection or dead letter. */
  readonly error?: ErrorRecord;
};

/** Why an intent was dead-lettered or rejected, recorded with its last error. */
export type GiveUpReason =
  | 'final'
  | 'max-attempts'
  | 'deadline'
  | 'not-needed'
  | 'bad-payload'
  /** LEDGER_API_INTERNAL_ERROR on every try: the participant cannot transcode the values. */
  | 'unreadable-values';

export type TrackerOptions = {
  readonly ledger: Pick<
    BotLedger,
    | 'submit'
    | 'eventsByContractId'
    | 'updateByOffset'
    | 'latestPrunedOffsets'
    | 'ledgerEnd'
    | 'listCompletions'
  >;
  readonly store: Store;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly userId: string;
  readonly completionTimeoutMs: number;
  readonly dedup: DedupConfig;
  readonly metrics: BotMetrics;
  /** The token bucket of a rule (one per rule id, shared by all its intents). */
  readonly rateLimiter: (ruleId: string, payload: SubmissionPayload) => TokenBucket;
  readonly onIntent?: (event: IntentEvent) => void;
};

/**
 * - `waiting`: a timer will start the next attempt (first attempt or a backoff);
 * - `throttled`: waiting for a token of the rule's rate limit;
 * - `submitting`: the `async/submit` call is out;
 * - `awaiting`: accepted (or found in flight); waiting for the completion;
 * - `checking`: after contention, looking up whether an earlier attempt committed or the intent
 *   is still needed (a success completion arriving meanwhile still settles it).
 */
type Phase = 'waiting' | 'throttled' | 'submitting' | 'awaiting' | 'checking';

type Tracked = {
  readonly commandId: string;
  readonly payload: SubmissionPayload;
  readonly permit: Permit;
  record: IntentRecord;
  dedup: DedupChoice;
  /** The submissionId of the latest attempt (from the journal after a restart). */
  submissionId: string | undefined;
  /** The latest attempt was refused as in flight: any attempt's completion now decides. */
  acceptAny: boolean;
  phase: Phase;
  timer: TimerHandle | undefined;
  /** Bumped whenever the intent moves on, so stale async continuations can tell. */
  seq: number;
  lastError: ErrorRecord | undefined;
  /** The pruning offset the dedup period was last anchored at (see #anchorAtPruning). */
  prunedAnchor: number | undefined;
  /** Attempts answered LEDGER_API_INTERNAL_ERROR (see unreadable-values.ts). */
  internalErrors: number;
};

/**
 * The per-intent state machine of the correctness kernel (ARCHITECTURE.md item 4). It owns the
 * intents handed to `track` until each is terminal: it submits them (fresh submissionId per
 * attempt, dedup anchored at the justifying offset), matches completions by commandId and
 * submissionId, times out, retries with jittered backoff, re-checks after contention and
 * dead-letters; every state change goes through the store first and is logged once.
 */
export class SubmissionTracker {
  readonly #o: TrackerOptions;
  readonly #tracked = new Map<string, Tracked>();
  readonly #abort = new AbortController();
  #closing = false;
  #idleWaiters: (() => void)[] = [];

  constructor(options: TrackerOptions) {
    this.#o = options;
  }

  /** Intents being worked on. */
  get size(): number {
    return this.#tracked.size;
  }

  has(commandId: string): boolean {
    return this.#tracked.has(commandId);
  }

  /** The intents with a submission or a lookup outstanding (what `drain` waits for). */
  get busy(): number {
    let n = 0;
    for (const t of this.#tracked.values()) if (isBusy(t.phase)) n++;
    return n;
  }

  /**
   * Takes charge of an open intent (new, or found in the journal at start). `permit` is released
   * when the intent becomes terminal. A `submitted` intent from an earlier run is resubmitted at
   * once under its commandId: if the earlier attempt landed, the replayed completion stream shows
   * its success, or the ledger answers DUPLICATE_COMMAND (a command that still interprets) or a
   * contention error (a consuming one, whose input that attempt archived), after which
   * #recheck finds the earlier commit.
   */
  track(record: IntentRecord, permit: Permit): void {
    if (this.#tracked.has(record.commandId) || this.#closing) {
      permit.release();
      return;
    }
    let payload: SubmissionPayload;
    try {
      payload = parsePayload(record.payload);
    } catch (err) {
      this.#o.store.transition(record.commandId, {
        to: 'dead-lettered',
        error: { ...errorRecord(err), reason: 'bad-payload' },
      });
      permit.release();
      return;
    }
    const t: Tracked = {
      commandId: record.commandId,
      payload,
      permit,
      record,
      dedup: this.#initialDedup(record),
      submissionId: record.submissionId,
      acceptAny: false,
      phase: 'waiting',
      timer: undefined,
      seq: 0,
      lastError: errorRecordOf(record.lastError),
      prunedAnchor: undefined,
      // After a restart only the last error is known; the bound is about a hopeless loop, and
      // maxAttempts still bounds the rest.
      internalErrors: errorRecordOf(record.lastError)?.code === INTERNAL_ERROR_CODE ? 1 : 0,
    };
    this.#tracked.set(t.commandId, t);
    this.#o.metrics.inFlight = this.#tracked.size;
    const due = record.state === 'submitted' ? 0 : (record.nextAttemptAt ?? 0);
    this.#schedule(t, Math.max(0, due - this.#o.clock.now()));
  }

  /** Feeds one completion from the completions stream (any command's; others are ignored). */
  onCompletion(completion: Completion, offset: number): void {
    this.#o.metrics.completionsSeen += 1;
    const t = this.#tracked.get(completion.commandId);
    if (t === undefined) return;
    const err = completionError(completion, SUBMIT_REQUEST);
    if (err === undefined) {
      // A success of any attempt of this commandId means the change landed.
      this.#settle(t, {
        to: 'succeeded',
        completionOffset: offset,
        ...(completion.updateId === undefined ? {} : { updateId: completion.updateId }),
      });
      return;
    }
    const current =
      t.acceptAny ||
      completion.submissionId === undefined ||
      completion.submissionId === t.submissionId;
    if (!current) {
      // A failure of an attempt we have already replaced; the newer attempt decides.
      this.#o.logger.debug(
        {
          ...this.#ids(t),
          submissionId: completion.submissionId,
          errorCode: err.error.code,
        },
        'ignoring the failed completion of an earlier attempt',
      );
      return;
    }
    this.#onError(t, err, offset);
  }

  /**
   * Stops starting attempts, then waits up to `graceMs` for the submissions and lookups already
   * out to finish (completions keep being fed meanwhile). Intents waiting for a retry stay
   * `pending` in the journal and are resumed by the next start.
   */
  async drain(graceMs: number): Promise<void> {
    this.#closing = true;
    this.#abortThrottled();
    for (const t of this.#tracked.values()) {
      if (t.phase === 'waiting') this.#clearTimer(t);
    }
    if (this.busy === 0) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        this.#o.clock.clearTimeout(timer);
        this.#idleWaiters = this.#idleWaiters.filter((w) => w !== done);
        resolve();
      };
      const timer = this.#o.clock.setTimeout(done, graceMs);
      this.#idleWaiters.push(done);
    });
  }

  /** Cancels everything still outstanding and releases every permit. Idempotent. */
  close(): void {
    this.#closing = true;
    this.#abort.abort(new AbortError('the bot is stopping'));
    for (const t of this.#tracked.values()) {
      this.#clearTimer(t);
      t.seq += 1;
      t.permit.release();
    }
    this.#tracked.clear();
    this.#o.metrics.inFlight = 0;
    this.#notifyIdle();
  }

  // ---- attempts ----

  #initialDedup(record: IntentRecord): DedupChoice {
    const d = this.#o.dedup;
    if (record.trigger.kind === 'slot') return { kind: 'since', fromMs: record.trigger.slot };
    return d.mode === 'duration'
      ? { kind: 'duration', ms: d.valueMs }
      : { kind: 'offset', offset: record.offset };
  }

  #schedule(t: Tracked, delayMs: number): void {
    this.#clearTimer(t);
    t.phase = 'waiting';
    const seq = ++t.seq;
    if (this.#closing) return;
    t.timer = this.#o.clock.setTimeout(() => {
      t.timer = undefined;
      if (t.seq === seq) void this.#attempt(t);
    }, delayMs);
  }

  async #attempt(t: Tracked): Promise<void> {
    if (this.#closing || !this.#tracked.has(t.commandId)) return;
    const giveUp = this.#exhausted(t, this.#o.clock.now());
    if (giveUp !== undefined) {
      this.#deadLetter(t, giveUp);
      return;
    }
    const seq = ++t.seq;
    t.phase = 'throttled';
    try {
      await this.#o.rateLimiter(t.record.ruleId, t.payload).take(this.#abort.signal);
    } catch {
      return; // closing
    }
    if (t.seq !== seq || this.#closing) return;
    const submissionId = this.#o.random.uuid();
    t.submissionId = submissionId;
    t.acceptAny = false;
    // Write-ahead: the journal knows about the attempt before the participant does.
    if (!this.#transition(t, { to: 'submitted', submissionId })) return;
    t.phase = 'submitting';
    // With group commit the attempt is committed with the rest of this turn's changes: one
    // commit for every submission made in the turn.
    try {
      await this.#o.store.sync();
    } catch (err) {
      this.#dropUnrecorded(t, 'submitted', err);
      return;
    }
    if (t.seq !== seq || !this.#tracked.has(t.commandId)) return;
    const body = buildSubmission(t.payload, {
      commandId: t.commandId,
      userId: t.record.userId,
      submissionId,
      dedup: t.dedup,
      nowMs: this.#o.clock.now(),
    });
    this.#o.metrics.submissions += 1;
    try {
      await this.#o.ledger.submit(body, { signal: this.#abort.signal });
    } catch (err) {
      if (t.seq !== seq || !this.#tracked.has(t.commandId)) return;
      if (err instanceof AbortError && this.#abort.signal.aborted) return;
      this.#onError(t, err, undefined);
      return;
    }
    if (t.seq !== seq || !this.#tracked.has(t.commandId)) return; // the completion came first
    this.#await(t);
  }

  /** Waits for the completion; resubmits under the same commandId if none comes in time. */
  #await(t: Tracked): void {
    this.#clearTimer(t);
    t.phase = 'awaiting';
    const seq = ++t.seq;
    this.#notifyIdle();
    t.timer = this.#o.clock.setTimeout(() => {
      t.timer = undefined;
      if (t.seq !== seq || !this.#tracked.has(t.commandId)) return;
      t.lastError = {
        code: 'COMPLETION_TIMEOUT',
        message: `no completion within ${this.#o.completionTimeoutMs} ms; resubmitting under the same commandId`,
      };
      this.#o.logger.warn(
        { ...this.#ids(t), submissionId: t.submissionId, errorCode: 'COMPLETION_TIMEOUT' },
        'no completion in time, resubmitting',
      );
      if (this.#closing) {
        // Leave it `submitted`: the next start resubmits it.
        t.phase = 'waiting';
        this.#notifyIdle();
        return;
      }
      void this.#attempt(t);
    }, this.#o.completionTimeoutMs);
  }

  #onError(t: Tracked, err: unknown, completionOffset: number | undefined): void {
    this.#clearTimer(t);
    t.seq += 1;
    t.lastError = errorRecord(err);
    const code = err instanceof LedgerApiError ? err.error.code : undefined;
    if (t.dedup.kind === 'duration' && code !== undefined && DEDUP_FALLBACK_CODES.has(code)) {
      if (t.record.inDoubt !== true) {
        void this.#anchorAtPruning(t, err);
        return;
      }
    } else if (code !== undefined && DEDUP_FALLBACK_CODES.has(code)) {
      // A slot's window back to its time can exceed the participant's maximum (a long catch-up):
      // then the configured duration is the best that is still accepted.
      const d = this.#o.dedup;
      const ms = d.mode === 'offset' ? d.fallbackMs : d.valueMs;
      t.dedup = { kind: 'duration', ms };
      this.#o.logger.warn(
        { ...this.#ids(t), errorCode: code, dedupDurationMs: ms },
        'the participant no longer accepts the dedup offset; falling back to a dedup duration',
      );
      this.#retryLater(t, err, 0);
      return;
    }
    if (isInternalSubmitError(err, completionOffset !== undefined)) {
      t.internalErrors += 1;
      const attempts = t.record.attempts;
      if (
        t.internalErrors >= UNREADABLE_VALUES_ATTEMPTS ||
        attempts >= t.payload.retry.maxAttempts
      ) {
        t.lastError = unreadableValuesError(t.payload, t.lastError, t.internalErrors);
        this.#deadLetter(t, 'unreadable-values');
        return;
      }
    }
    const c = classifyForSubmission(err);
    switch (c) {
      case 'duplicate':
        this.#settle(t, {
          to: 'duplicate',
          ...optionalOffset(completionOffsetOf(err) ?? completionOffset),
        });
        return;
      case 'in-flight':
        // Another attempt of this change is being processed: its completion decides.
        t.acceptAny = true;
        this.#o.logger.info(
          { ...this.#ids(t), submissionId: t.submissionId, errorCode: code },
          'an earlier attempt is still in flight; waiting for its completion',
        );
        this.#await(t);
        return;
      case 'retryable':
      case 'unknown-outcome':
        this.#retryLater(t, err);
        return;
      case 'stale':
        void this.#recheck(t, err);
        return;
      case 'final':
        this.#deadLetter(t, 'final');
        return;
    }
  }

  #retryLater(t: Tracked, err: unknown, delayOverrideMs?: number): void {
    const retry = t.payload.retry;
    const attempts = t.record.attempts;
    if (attempts >= retry.maxAttempts) {
      this.#deadLetter(t, 'max-attempts');
      return;
    }
    const delayMs =
      delayOverrideMs ??
      Math.max(
        backoffDelay(
          { initialMs: retry.initialDelayMs, maxMs: retry.maxDelayMs },
          Math.max(0, attempts - 1),
          this.#o.random,
        ),
        retryDelayHintMs(err) ?? 0,
      );
    const at = this.#o.clock.now() + delayMs;
    const giveUp = this.#exhausted(t, at);
    if (giveUp !== undefined) {
      this.#deadLetter(t, giveUp);
      return;
    }
    const change = {
      to: 'pending',
      nextAttemptAt: at,
      error: t.lastError,
      definite: isDefinite(err),
    } as const;
    if (!this.#transition(t, change)) return;
    this.#schedule(t, delayMs);
  }

  /**
   * The participant refused both the offset anchor and the duration fallback: the dedup period
   * the change needs reaches before the pruning offset, so the ledger can no longer say whether
   * an earlier submission of this change committed. For an intent in doubt (an attempt may have
   * committed) resubmitting could make the change twice, so it is dead-lettered, as before.
   * But when the journal shows that EVERY attempt of this commandId got a definite rejection
   * (`inDoubt` unset: no timeout, lost response, restart with an attempt out or unclassifiable
   * answer), none of them can have committed, and the only reason to give up would be the
   * pruning itself. Then it is resubmitted with the dedup period anchored at the pruning offset,
   * the earliest the participant accepts: that still guards its own retries and any later
   * submission of the same change. The one thing it cannot see is a commit of the same
   * commandId by ANOTHER replica before the pruning offset (see docs/runtime.md).
   */
  async #anchorAtPruning(t: Tracked, err: unknown): Promise<void> {
    t.phase = 'checking';
    const seq = ++t.seq;
    let pruned = 0;
    try {
      pruned = await prunedUpTo(this.#o.ledger, { signal: this.#abort.signal });
    } catch {
      if (this.#abort.signal.aborted) return;
      // Unknown: giving up below is the safe side.
    }
    if (t.seq !== seq || !this.#tracked.has(t.commandId)) return;
    this.#notifyIdle();
    if (pruned <= 0 || (t.prunedAnchor !== undefined && pruned <= t.prunedAnchor)) {
      this.#deadLetter(t, 'final');
      return;
    }
    t.prunedAnchor = pruned;
    t.dedup = { kind: 'offset', offset: pruned };
    this.#o.logger.warn(
      { ...this.#ids(t), errorCode: t.lastError?.code, dedupOffset: pruned },
      'every attempt so far was definitely refused, so none committed; resubmitting with the dedup period anchored at the pruning offset',
    );
    if (this.#closing) {
      t.phase = 'waiting';
      return;
    }
    this.#retryLater(t, err, 0);
  }

  /**
   * Contention: the inputs changed under the command. Canton interprets before it deduplicates,
   * so this is also how a resubmission of a consuming command whose earlier attempt committed
   * fails. So first: did one of this commandId's attempts (ours, an earlier run's or a twin
   * replica's) archive the contract? Then it succeeded. If another command archived it (or it is
   * not visible), the trigger no longer holds: rejected. Still active, or the lookup failed (we
   * cannot tell, and guessing `rejected` could bury a success): retried, under dedup.
   */
  async #recheck(t: Tracked, err: unknown): Promise<void> {
    t.phase = 'checking';
    const seq = ++t.seq;
    let found: EarlierCommit;
    let pruned: boolean | undefined = false;
    let completed: CompletionLookup | undefined;
    const contractIds = contractIdsToCheck(t.payload, err);
    try {
      found = await findEarlierCommit(
        this.#o.ledger,
        {
          commandId: t.commandId,
          parties: [...new Set([...t.payload.actAs, ...t.payload.readAs])],
          contractIds,
        },
        { signal: this.#abort.signal },
      );
      // Only an intent one of whose attempts may have committed can have archived it itself.
      if (t.record.inDoubt === true) {
        pruned = await lostToPruning(this.#o.ledger, found, t.record.offset, {
          signal: this.#abort.signal,
        });
      }
      if (found.kind === 'active' && (contractIds.length === 0 || isKeyConflict(err))) {
        // No archived input tells whose command it was: a keyed create (or createAndExercise)
        // refused because its key is taken, maybe by its own earlier attempt, or a refusal that
        // names no contract at all. Its completion says.
        completed = await findCommittedCompletion(
          this.#o.ledger,
          {
            userId: t.record.userId,
            actAs: t.payload.actAs,
            commandId: t.commandId,
            afterOffset: t.record.offset,
          },
          this.#o.logger,
          { signal: this.#abort.signal },
        );
      }
    } catch {
      return; // aborted: the bot is stopping
    }
    // A completion that settled the intent meanwhile (success of any attempt) wins.
    if (t.seq !== seq || !this.#tracked.has(t.commandId)) return;
    this.#notifyIdle();
    if (completed?.kind === 'ours') {
      this.#o.metrics.earlierCommitsFound += 1;
      this.#o.logger.info(
        {
          ...this.#ids(t),
          completionUpdateId: completed.updateId,
          completionOffset: completed.offset,
          errorCode: t.lastError?.code,
        },
        'an earlier attempt of this command committed (its successful completion was found); settling it succeeded',
      );
      this.#settle(t, {
        to: 'succeeded',
        completionOffset: completed.offset,
        updateId: completed.updateId,
      });
      return;
    }
    if (completed?.kind === 'pruned' && t.record.inDoubt === true) {
      // One of our attempts may have committed, and its completion may be in the pruned range:
      // a retry would be refused the same way (the key stays taken), so an operator decides, as
      // for a pruned archive (docs/runtime.md). Never in doubt: none of ours committed, retry.
      t.lastError = completionsPruned(t.record.offset, completed.prunedUpTo, t.lastError);
      this.#deadLetter(t, 'final');
      return;
    }
    if (completed?.kind === 'unknown') {
      this.#o.logger.warn(
        { ...this.#ids(t), ...errorFields(completed.error) },
        'cannot tell whether an earlier attempt committed (reading the completions failed); retrying later',
      );
    }
    if (pruned === true && found.kind === 'gone') {
      // The ledger can no longer say who archived it; `rejected` could bury our own success, and
      // a retry would be refused the same way for ever: an operator decides (docs/runtime.md).
      t.lastError = earlierCommitUnknown(found.contractId, t.record.offset, t.lastError);
      this.#deadLetter(t, 'final');
      return;
    }
    if (pruned === undefined && found.kind === 'gone') {
      // Whether it was pruned cannot be read now: as for any failed lookup, retry.
      found = {
        kind: 'unknown',
        contractId: found.contractId,
        error: new Error('the participant did not say how far it has pruned'),
      };
    }
    switch (found.kind) {
      case 'ours':
        this.#o.metrics.earlierCommitsFound += 1;
        this.#o.logger.info(
          {
            ...this.#ids(t),
            contractId: found.contractId,
            completionUpdateId: found.updateId,
            completionOffset: found.offset,
            errorCode: t.lastError?.code,
          },
          'an earlier attempt of this command committed (its transaction archived the contract); settling it succeeded',
        );
        this.#settle(t, {
          to: 'succeeded',
          completionOffset: found.offset,
          updateId: found.updateId,
        });
        return;
      case 'gone':
        this.#o.logger.info(
          {
            ...this.#ids(t),
            contractId: found.contractId,
            errorCode: t.lastError?.code,
            ...(found.archivedBy === undefined
              ? {}
              : {
                  archivedByUpdateId: found.archivedBy.updateId,
                  archivedAt: found.archivedBy.offset,
                }),
          },
          'the contract the intent needs is no longer active; not retrying',
        );
        this.#settle(t, {
          to: 'rejected',
          error: {
            ...t.lastError,
            reason: 'not-needed',
            contractId: found.contractId,
            ...(found.archivedBy === undefined ? {} : { archivedBy: found.archivedBy }),
          },
        });
        return;
      case 'unknown':
        this.#o.logger.warn(
          { ...this.#ids(t), contractId: found.contractId, ...errorFields(found.error) },
          'cannot tell whether an earlier attempt committed (the lookup failed); retrying later',
        );
        break;
      case 'active':
        break;
    }
    if (this.#closing) {
      t.phase = 'waiting';
      return;
    }
    this.#retryLater(t, err);
  }

  #exhausted(t: Tracked, at: number): GiveUpReason | undefined {
    if (t.record.attempts >= t.payload.retry.maxAttempts) return 'max-attempts';
    if (t.record.deadline !== undefined && at >= t.record.deadline) return 'deadline';
    return undefined;
  }

  #deadLetter(t: Tracked, reason: GiveUpReason): void {
    const last = t.lastError ?? { code: 'NO_ATTEMPT', message: 'no attempt was made' };
    this.#settle(t, { to: 'dead-lettered', error: { ...last, reason } });
  }

  // ---- bookkeeping ----

  #settle(t: Tracked, change: IntentChange): void {
    this.#clearTimer(t);
    t.seq += 1;
    this.#transition(t, change);
    this.#tracked.delete(t.commandId);
    t.permit.release();
    this.#o.metrics.inFlight = this.#tracked.size;
    this.#notifyIdle();
  }

  /** Journal first, then log and emit. False when the store refused (the intent is dropped). */
  #transition(t: Tracked, change: IntentChange): boolean {
    const from = t.record.state;
    try {
      t.record = this.#o.store.transition(t.commandId, change);
    } catch (err) {
      this.#dropUnrecorded(t, change.to, err);
      return false;
    }
    const error = 'error' in change ? (change.error as ErrorRecord | undefined) : undefined;
    logIntent(this.#o.logger, t.record, from, error);
    this.#o.metrics.countTransition(change.to, t.record.ruleId, from);
    this.#o.onIntent?.({
      commandId: t.commandId,
      ruleId: t.record.ruleId,
      from,
      to: change.to,
      record: t.record,
      ...(error === undefined ? {} : { error }),
    });
    return true;
  }

  /** The journal refused a change: the intent is left to the next start, which reads the journal. */
  #dropUnrecorded(t: Tracked, state: IntentState, err: unknown): void {
    this.#o.logger.error(
      { ...this.#ids(t), state, ...errorFields(err) },
      'cannot record the intent state change; leaving the intent to the next start',
    );
    this.#clearTimer(t);
    t.seq += 1;
    if (this.#tracked.delete(t.commandId)) t.permit.release();
    this.#o.metrics.inFlight = this.#tracked.size;
    this.#notifyIdle();
  }

  #ids(t: Tracked): Record<string, unknown> {
    return intentFields(t.record);
  }

  #clearTimer(t: Tracked): void {
    if (t.timer !== undefined) this.#o.clock.clearTimeout(t.timer);
    t.timer = undefined;
  }

  #abortThrottled(): void {
    // Rate-limit waits are cancelled; submissions already out are left to finish.
    for (const t of this.#tracked.values()) {
      if (t.phase === 'throttled') {
        t.seq += 1;
        t.phase = 'waiting';
      }
    }
  }

  #notifyIdle(): void {
    if (this.busy > 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }
}

function isBusy(phase: Phase): boolean {
  return phase === 'submitting' || phase === 'awaiting' || phase === 'checking';
}

function optionalOffset(offset: number | undefined): { completionOffset?: number } {
  return offset === undefined ? {} : { completionOffset: offset };
}

/** Contention on a contract key: the key is taken, possibly by the intent's own earlier create. */
const KEY_CONFLICT_CODES: ReadonlySet<string> = new Set([
  'DUPLICATE_CONTRACT_KEY',
  'INCONSISTENT_CONTRACT_KEY',
]);

function isKeyConflict(err: unknown): boolean {
  return err instanceof LedgerApiError && KEY_CONFLICT_CODES.has(err.error.code);
}
