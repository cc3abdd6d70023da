import { AbortError } from '../core/abort-error.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Random } from '../core/random.js';
import { ledgerErrorCode } from '../ledger/error-checks.js';
import type { Completion } from '../ledger/wire/wire-types.js';
import type { IntentRecord, Store } from '../store/store.js';
import type { Permit } from './admission.js';
import { attemptErrorStep } from './attempt-error-step.js';
import type { BotLedger } from './bot-ledger.js';
import type { BotMetrics } from './bot-metrics.js';
import { isDefinite } from './classify-for-submission.js';
import type { DedupConfig } from './config/bot-config.js';
import {
  logRecheckVerdict,
  notNeededError,
  recheckFindings,
  recheckVerdict,
  type RecheckLedger,
} from './contention-recheck.js';
import { initialDedup, pruningAnchor } from './dedup-period.js';
import { errorRecord } from './error-record.js';
import { InFlightIntents, type IntentEvent } from './in-flight-intents.js';
import { intentFields } from './intent-log.js';
import { matchCompletion } from './match-completion.js';
import { nextAttempt, type GiveUpReason } from './retry-schedule.js';
import { sendAttempt, type SendAttemptDeps } from './send-attempt.js';
import {
  SubmissionPayloadError,
  type JournalPayload,
  type SubmissionPayload,
} from './submission-payload.js';
import type { TokenBucket } from './token-bucket.js';
import { trackedIntent, type TrackedIntent } from './tracked-intent.js';
import { isInternalSubmitError } from './unreadable-values.js';

export type { IntentEvent } from './in-flight-intents.js';

export type TrackerOptions = {
  /** What an attempt sends, and what a contention re-check reads. */
  readonly ledger: Pick<BotLedger, 'submit'> & RecheckLedger;
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
  /** See BotOptions.maySubmit. */
  readonly maySubmit?: (ruleId: string) => boolean;
  readonly onIntent?: (event: IntentEvent) => void;
};

/**
 * The per-intent state machine of the correctness kernel (ARCHITECTURE.md item 4). It owns the
 * intents handed to `track` until each is terminal: it submits them (fresh submissionId per
 * attempt, dedup anchored at the justifying offset), matches completions by commandId and
 * submissionId, times out, retries with jittered backoff, re-checks after contention and
 * dead-letters; every state change goes through the store first and is logged once.
 *
 * This class sequences the attempts; the decisions live beside it: `attemptErrorStep` (what an
 * error leads to), `nextAttempt` (backoff and bounds), `dedup-period.ts` (the dedup period and
 * its fallbacks), `contention-recheck.ts` (earlier commits after contention) and
 * `InFlightIntents` (the journal-first bookkeeping).
 */
export class SubmissionTracker {
  readonly #o: TrackerOptions;
  readonly #intents: InFlightIntents;
  readonly #abort = new AbortController();
  readonly #sendDeps: SendAttemptDeps;
  #closing = false;

  constructor(options: TrackerOptions) {
    this.#o = options;
    this.#intents = new InFlightIntents({
      store: options.store,
      clock: options.clock,
      logger: options.logger,
      metrics: options.metrics,
      onIntent: options.onIntent,
    });
    this.#sendDeps = {
      ...options,
      intents: this.#intents,
      signal: this.#abort.signal,
      closing: () => this.#closing,
    };
  }

  /** Intents being worked on. */
  get size(): number {
    return this.#intents.size;
  }

  has(commandId: string): boolean {
    return this.#intents.has(commandId);
  }

  /** The intents with a submission or a lookup outstanding (what `drain` waits for). */
  get busy(): number {
    return this.#intents.busy;
  }

  /**
   * Takes charge of an open intent (new, or found in the journal at start). `permit` is released
   * when the intent becomes terminal. A `submitted` intent from an earlier run is resubmitted at
   * once under its commandId: if the earlier attempt landed, the replayed completion stream shows
   * its success, or the ledger answers DUPLICATE_COMMAND (a command that still interprets) or a
   * contention error (a consuming one, whose input that attempt archived), after which
   * #recheck finds the earlier commit.
   */
  track(record: IntentRecord<JournalPayload>, permit: Permit): void {
    if (this.#intents.has(record.commandId) || this.#closing) {
      permit.release();
      return;
    }
    const { payload } = record;
    if (payload instanceof SubmissionPayloadError) {
      this.#o.store.transition(record.commandId, {
        to: 'dead-lettered',
        error: { ...errorRecord(payload), reason: 'bad-payload' },
      });
      permit.release();
      return;
    }
    const usable = { ...record, payload };
    const t = trackedIntent(usable, permit, initialDedup(usable, this.#o.dedup));
    this.#intents.add(t);
    const due = record.state === 'submitted' ? 0 : (record.nextAttemptAt ?? 0);
    this.#schedule(t, Math.max(0, due - this.#o.clock.now()));
  }

  /** Feeds one completion from the completions stream (any command's; others are ignored). */
  onCompletion(completion: Completion, offset: number): void {
    this.#o.metrics.completionsSeen += 1;
    const t = this.#intents.get(completion.commandId);
    if (t === undefined) return;
    const match = matchCompletion(t, completion, offset);
    if (match.kind === 'succeeded') {
      this.#intents.settle(t, match.change);
    } else if (match.kind === 'superseded') {
      this.#o.logger.debug(
        {
          ...intentFields(t.record),
          submissionId: completion.submissionId,
          errorCode: match.error.error.code,
        },
        'ignoring the failed completion of an earlier attempt',
      );
    } else {
      this.#onError(t, match.error, offset);
    }
  }

  /**
   * Stops starting attempts, then waits up to `graceMs` for the submissions and lookups already
   * out to finish (completions keep being fed meanwhile). Intents waiting for a retry stay
   * `pending` in the journal and are resumed by the next start.
   */
  async drain(graceMs: number): Promise<void> {
    this.#closing = true;
    this.#abortThrottled();
    for (const t of this.#intents.values()) {
      if (t.phase === 'waiting') this.#intents.clearTimer(t);
    }
    await this.#intents.whenIdle(graceMs);
  }

  /** Cancels everything still outstanding and releases every permit. Idempotent. */
  close(): void {
    this.#closing = true;
    this.#abort.abort(new AbortError('the bot is stopping'));
    this.#intents.clear();
  }

  // ---- attempts ----

  #schedule(t: TrackedIntent, delayMs: number): void {
    this.#intents.clearTimer(t);
    t.phase = 'waiting';
    const seq = ++t.seq;
    if (this.#closing) return;
    if (delayMs <= 0) {
      // Due now: attempt in this turn, so that its `submitted` joins the group commit of the
      // turn that recorded the intent (one commit, not two, before the submission) and no timer
      // turn (at least 1 ms) delays it.
      queueMicrotask(() => {
        if (t.seq === seq) void this.#attempt(t);
      });
      return;
    }
    t.timer = this.#o.clock.setTimeout(() => {
      t.timer = undefined;
      if (t.seq === seq) void this.#attempt(t);
    }, delayMs);
  }

  /** Whether `t` was settled, dropped or moved on since `seq` was taken. */
  #stale(t: TrackedIntent, seq: number): boolean {
    return t.seq !== seq || !this.#intents.has(t.commandId);
  }

  async #attempt(t: TrackedIntent): Promise<void> {
    const outcome = await sendAttempt(this.#sendDeps, t);
    // A completion may have settled it in the tick since.
    if ('seq' in outcome && this.#stale(t, outcome.seq)) return;
    switch (outcome.kind) {
      case 'sent':
        this.#await(t);
        return;
      case 'held':
        this.#o.logger.warn(
          { ...intentFields(t.record), submissionId: t.submissionId },
          'submission held: this member may no longer hold the lease of the rule',
        );
        this.#await(t);
        return;
      case 'failed':
        this.#onError(t, outcome.error, undefined);
        return;
      case 'give-up':
        this.#deadLetter(t, outcome.reason);
        return;
      case 'stopped':
        return;
    }
  }

  /** Waits for the completion; resubmits under the same commandId if none comes in time. */
  #await(t: TrackedIntent): void {
    this.#intents.clearTimer(t);
    t.phase = 'awaiting';
    const seq = ++t.seq;
    this.#intents.notifyIdle();
    const timeoutMs = this.#o.completionTimeoutMs;
    t.timer = this.#o.clock.setTimeout(() => {
      t.timer = undefined;
      if (this.#stale(t, seq)) return;
      t.lastError = {
        code: 'COMPLETION_TIMEOUT',
        message: `no completion within ${timeoutMs} ms; resubmitting under the same commandId`,
      };
      this.#o.logger.warn(
        {
          ...intentFields(t.record),
          submissionId: t.submissionId,
          errorCode: 'COMPLETION_TIMEOUT',
          timeoutMs,
        },
        'no completion in time, resubmitting',
      );
      if (this.#closing) {
        // Leave it `submitted`: the next start resubmits it.
        t.phase = 'waiting';
        this.#intents.notifyIdle();
        return;
      }
      void this.#attempt(t);
    }, timeoutMs);
  }

  #onError(t: TrackedIntent, err: unknown, completionOffset: number | undefined): void {
    this.#intents.clearTimer(t);
    t.seq += 1;
    t.lastError = errorRecord(err);
    const internal = isInternalSubmitError(err, completionOffset !== undefined);
    if (internal) t.internalErrors += 1;
    const step = attemptErrorStep(t, err, completionOffset, internal, this.#o.dedup);
    switch (step.kind) {
      case 'fall-back-dedup':
        t.dedup = { kind: 'duration', ms: step.ms };
        this.#o.logger.warn(
          { ...intentFields(t.record), errorCode: ledgerErrorCode(err), dedupDurationMs: step.ms },
          'dedup offset refused; falling back to a dedup duration',
        );
        this.#retryLater(t, err, 0);
        return;
      case 'anchor-at-pruning':
        void this.#anchorAtPruning(t, err);
        return;
      case 'duplicate':
        this.#intents.settle(t, {
          to: 'duplicate',
          ...(step.completionOffset === undefined
            ? {}
            : { completionOffset: step.completionOffset }),
        });
        return;
      case 'await-in-flight':
        // Another attempt of this change is being processed: its completion decides.
        t.acceptAny = true;
        this.#o.logger.info(
          {
            ...intentFields(t.record),
            submissionId: t.submissionId,
            errorCode: ledgerErrorCode(err),
          },
          'attempt already in flight; awaiting its completion',
        );
        this.#await(t);
        return;
      case 'retry':
        this.#retryLater(t, err);
        return;
      case 'recheck':
        void this.#recheck(t, err);
        return;
      case 'dead-letter':
        if (step.lastError !== undefined) t.lastError = step.lastError;
        this.#deadLetter(t, step.reason);
        return;
    }
  }

  #retryLater(t: TrackedIntent, err: unknown, delayOverrideMs?: number): void {
    const next = nextAttempt(
      { record: t.record, retry: t.record.payload.retry, err, delayOverrideMs },
      this.#o.clock.now(),
      this.#o.random,
    );
    if (next.kind === 'give-up') {
      this.#deadLetter(t, next.reason);
      return;
    }
    const change = {
      to: 'pending',
      nextAttemptAt: next.at,
      error: t.lastError,
      definite: isDefinite(err),
    } as const;
    if (!this.#intents.transition(t, change)) return;
    this.#schedule(t, next.delayMs);
  }

  /** Both dedup anchors refused and no attempt in doubt: see `anchorAfterPruning`. */
  async #anchorAtPruning(t: TrackedIntent, err: unknown): Promise<void> {
    t.phase = 'checking';
    const seq = ++t.seq;
    const anchor = await pruningAnchor(this.#o.ledger, t.prunedAnchor, this.#abort.signal);
    if (this.#abort.signal.aborted || this.#stale(t, seq)) return;
    this.#intents.notifyIdle();
    if (anchor === undefined) {
      this.#deadLetter(t, 'final');
      return;
    }
    t.prunedAnchor = anchor;
    t.dedup = { kind: 'offset', offset: anchor };
    this.#o.logger.warn(
      { ...intentFields(t.record), errorCode: t.lastError?.code, dedupOffset: anchor },
      'dedup period refused, no attempt in doubt; anchoring it at the pruning offset',
    );
    if (this.#closing) {
      t.phase = 'waiting';
      return;
    }
    this.#retryLater(t, err, 0);
  }

  /** Contention: see `recheckFindings` and `recheckVerdict`. */
  async #recheck(t: TrackedIntent, err: unknown): Promise<void> {
    t.phase = 'checking';
    const seq = ++t.seq;
    const findings = await recheckFindings(
      this.#o.ledger,
      t,
      err,
      this.#o.logger,
      this.#abort.signal,
    );
    if (findings === undefined) return; // the bot is stopping
    // A completion that settled the intent meanwhile (success of any attempt) wins.
    if (this.#stale(t, seq)) return;
    this.#intents.notifyIdle();
    const verdict = recheckVerdict(findings, t);
    logRecheckVerdict(this.#o.logger, t, verdict);
    switch (verdict.kind) {
      case 'succeeded':
        this.#o.metrics.earlierCommitsFound += 1;
        this.#intents.settle(t, {
          to: 'succeeded',
          completionOffset: verdict.offset,
          updateId: verdict.updateId,
        });
        return;
      case 'dead-letter':
        t.lastError = verdict.lastError;
        this.#deadLetter(t, 'final');
        return;
      case 'rejected':
        this.#intents.settle(t, { to: 'rejected', error: notNeededError(verdict, t.lastError) });
        return;
      case 'retry':
        break;
    }
    if (this.#closing) {
      t.phase = 'waiting';
      return;
    }
    this.#retryLater(t, err);
  }

  #deadLetter(t: TrackedIntent, reason: GiveUpReason): void {
    const last = t.lastError ?? { code: 'NO_ATTEMPT', message: 'no attempt was made' };
    this.#intents.settle(t, { to: 'dead-lettered', error: { ...last, reason } });
  }

  #abortThrottled(): void {
    // Rate-limit waits are cancelled; submissions already out are left to finish.
    for (const t of this.#intents.values()) {
      if (t.phase === 'throttled') {
        t.seq += 1;
        t.phase = 'waiting';
      }
    }
  }
}
