import { EventEmitter } from 'node:events';
import { AbortError } from '../core/abort-error.js';
import { backoffDelay, type BackoffPolicy } from '../core/backoff.js';
import { systemClock, type Clock } from '../core/clock.js';
import { IllegalStateError } from '../core/illegal-state-error.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { systemRandom, type Random } from '../core/random.js';
import { AuthError } from '../ledger/auth/auth-error.js';
import { LedgerApiError } from '../ledger/ledger-api-error.js';
import type { UpdateElement } from '../ledger/ws/update-stream.js';
import type { JsTransaction } from '../ledger/wire/wire-types.js';
import type { TriggerKey as RuleTriggerKey } from '../rules/command-id.js';
import type { RuleSet } from '../rules/compiled-rule.js';
import { evaluateTransaction } from '../rules/evaluate.js';
import type { Intent } from '../rules/evaluation-result.js';
import { indexRules, type RuleIndex } from '../rules/rule-index.js';
import {
  isTerminal,
  type IntentRecord,
  type NewIntent,
  type Store,
  type TriggerKey,
} from '../store/store.js';
import { Admission } from './admission.js';
import type { BotLedger } from './bot-ledger.js';
import { BotMetrics } from './bot-metrics.js';
import type { DedupConfig, StartPosition } from './config/bot-config.js';
import { errorRecord } from './error-record.js';
import { RuntimeError } from './runtime-error.js';
import { payloadOf, type SubmissionPayload } from './submission-payload.js';
import { planSubscription, type SubscriptionPlan } from './subscription-plan.js';
import {
  intentFields,
  logIntent,
  SubmissionTracker,
  type IntentEvent,
} from './submission-tracker.js';
import { TokenBucket } from './token-bucket.js';
import type { ScheduleDriver } from '../schedule/schedule-driver.js';
import type { SlotSubmitContext } from '../schedule/run-slot.js';
import { botSchedules, type BotScheduleOptions } from './bot-schedules.js';

export type BotState = 'created' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

export type BotSubmissionOptions = {
  /** Intents worked on at once over all rules (default 16). */
  readonly maxInFlight?: number;
  /** How long to wait for a completion before resubmitting (default 30 s). */
  readonly completionTimeoutMs?: number;
  /** Default: anchor at the justifying offset, falling back to a 1 h duration. */
  readonly dedup?: DedupConfig;
};

export type BotOptions = {
  /** The compiled rules (`loadRules`). */
  readonly rules: RuleSet;
  /** Party alias → party id. */
  readonly parties: Readonly<Record<string, string>>;
  /** The Ledger API user the bot submits as; part of every change id. */
  readonly userId: string;
  /** Usually the LedgerClient. The bot does not close it. */
  readonly ledger: BotLedger;
  readonly store: Store;
  /** Close the store on stop (default true). */
  readonly closeStore?: boolean;
  /** Default: the checkpoint, or the ledger end when there is none. */
  readonly start?: StartPosition;
  readonly submission?: BotSubmissionOptions;
  /** How long `stop()` waits for submissions already out (default 10 s). */
  readonly stopGraceMs?: number;
  /** Backoff between restarts of a stream after an auth failure (default 1 s doubling to 1 min). */
  readonly restartBackoff?: BackoffPolicy;
  /** Websocket reconnect backoff, passed to the client streams. */
  readonly streamBackoff?: BackoffPolicy;
  readonly clock?: Clock;
  readonly random?: Random;
  readonly logger?: Logger;
  /** Schedule rules: the scheduler, the snapshot source, or `drive: false` to run no slots. */
  readonly schedule?: BotScheduleOptions & { readonly drive?: boolean };
};

/** What the bot emits, for the demo's account, the ops layer and tests. */
export type BotEventMap = {
  state: [state: BotState, previous: BotState];
  intent: [event: IntentEvent];
  /** An element of the updates stream was processed (its intents recorded). */
  offset: [offset: number];
  'rule-error': [error: { ruleId: string; updateId: string; offset: number; message: string }];
};

export type Bot = {
  readonly state: BotState;
  /** Why the bot failed, when `state` is `failed`. */
  readonly error: unknown;
  /** Live counters and gauges; `metrics.snapshot()` copies them. */
  readonly metrics: BotMetrics;
  readonly events: EventEmitter<BotEventMap>;
  /** The subscription built from the rules. */
  readonly plan: SubscriptionPlan;
  /**
   * Resolves the start offset, subscribes and resumes the open intents of the journal; resolves
   * once the bot is running. Throws (and the bot is `failed`) when the ledger cannot be reached.
   */
  start(): Promise<void>;
  /**
   * Stops intake, waits up to the grace period for submissions already out, saves the checkpoint,
   * closes the streams and the store. Idempotent; safe in every state.
   */
  stop(): Promise<void>;
  /** Settles when the bot is stopped or failed (never rejects). */
  readonly done: Promise<void>;
  /** The schedule driver (undefined without enabled schedule rules, or with `drive: false`). */
  readonly schedules: ScheduleDriver | undefined;
  /**
   * Records the intents of a schedule slot in the journal and hands them to the submission
   * pipeline (the same limits, retries and dead letters as event rules). Resolves once they are
   * recorded and admitted, not once they complete; intents already in the journal are left
   * as they are. The checkpoint does not wait for them; the slot record does.
   */
  submitIntents(intents: readonly Intent[], context: SlotSubmitContext): Promise<void>;
};

const DEFAULT_RESTART_BACKOFF: BackoffPolicy = { initialMs: 1_000, maxMs: 60_000 };
const DEFAULT_DEDUP: DedupConfig = { mode: 'offset', fallbackMs: 3_600_000 };

/** Creates a bot; does no I/O (see `start`). Throws RuntimeError when a rule's party is unknown. */
export function createBot(options: BotOptions): Bot {
  return new TriggerBot(options);
}

class TriggerBot implements Bot {
  readonly metrics = new BotMetrics();
  readonly events = new EventEmitter<BotEventMap>();
  readonly plan: SubscriptionPlan;
  readonly done: Promise<void>;
  readonly schedules: ScheduleDriver | undefined;

  readonly #o: BotOptions;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #log: Logger;
  readonly #index: RuleIndex;
  readonly #admission: Admission;
  readonly #tracker: SubmissionTracker;
  readonly #buckets = new Map<string, TokenBucket>();
  /** Aborts intake: the updates stream and waits for admission. */
  readonly #intake = new AbortController();
  /** Aborts the completions stream, after the drain. */
  readonly #completionsAbort = new AbortController();
  #state: BotState = 'created';
  #error: unknown = undefined;
  #resolveDone!: () => void;
  #starting: Promise<void> | undefined;
  #stopping: Promise<void> | undefined;
  #ingestTask: Promise<void> | undefined;
  #completionsTask: Promise<void> | undefined;
  #lastProcessed: number | undefined;

  constructor(options: BotOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? systemRandom;
    this.#log = (options.logger ?? silentLogger).child({ component: 'runtime' });
    this.#index = indexRules(options.rules);
    this.plan = planSubscription(options.rules, options.parties);
    this.#admission = new Admission(options.submission?.maxInFlight ?? 16);
    this.#tracker = new SubmissionTracker({
      ledger: options.ledger,
      store: options.store,
      clock: this.#clock,
      random: this.#random,
      logger: this.#log,
      userId: options.userId,
      completionTimeoutMs: options.submission?.completionTimeoutMs ?? 30_000,
      dedup: options.submission?.dedup ?? DEFAULT_DEDUP,
      metrics: this.metrics,
      rateLimiter: (ruleId, payload) => this.#bucket(ruleId, payload),
      onIntent: (event) => this.events.emit('intent', event),
    });
    this.done = new Promise((resolve) => (this.#resolveDone = resolve));
    this.schedules =
      options.schedule?.drive === false
        ? undefined
        : botSchedules({
            rules: options.rules,
            parties: options.parties,
            ledger: options.ledger,
            journal: options.store,
            sink: this,
            clock: this.#clock,
            random: this.#random,
            logger: options.logger ?? silentLogger,
            ...(options.schedule === undefined ? {} : { options: options.schedule }),
          });
  }

  get state(): BotState {
    return this.#state;
  }

  get error(): unknown {
    return this.#error;
  }

  start(): Promise<void> {
    if (this.#state !== 'created') {
      return Promise.reject(
        new IllegalStateError(`start() needs a new bot; this one is ${this.#state}`),
      );
    }
    this.#setState('starting');
    this.#starting = this.#start();
    return this.#starting;
  }

  async #start(): Promise<void> {
    try {
      const ledgerEnd = await this.#o.ledger.ledgerEnd({ signal: this.#intake.signal });
      const begin = this.#startOffset(ledgerEnd);
      const open = this.#o.store.openIntents();
      // Completions of intents submitted before a restart come after their justifying offset,
      // so the stream starts no later than the oldest open intent's offset; otherwise at the
      // ledger end, which is before any submission this run makes.
      const completionsBegin = Math.min(ledgerEnd, ...open.map((i) => i.offset));
      const parties = new Set(this.plan.actAsParties);
      for (const i of open) for (const p of i.actAs) parties.add(p);
      this.#log.info(
        {
          startOffset: begin,
          ledgerEnd,
          completionsOffset: completionsBegin,
          openIntents: open.length,
          shape: this.plan.shape,
          readParties: this.plan.readParties,
          rules: this.#o.rules.rules.length,
        },
        'bot starting',
      );
      if (parties.size > 0) {
        this.#completionsTask = this.#guard(this.#runCompletions(completionsBegin, [...parties]));
      }
      this.#ingestTask = this.#guard(this.#runIngest(begin));
      if (this.#state === 'starting') this.#setState('running');
      this.schedules?.start();
    } catch (err) {
      if (this.#state === 'starting' || this.#state === 'stopping') {
        await this.#fail(err);
      }
      throw err;
    }
  }

  #startOffset(ledgerEnd: number): number {
    const start = this.#o.start ?? { kind: 'checkpoint' };
    switch (start.kind) {
      case 'checkpoint':
        return this.#o.store.checkpoint() ?? ledgerEnd;
      case 'ledger-end':
        return ledgerEnd;
      case 'begin':
        return 0;
      case 'offset':
        return start.offset;
    }
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    if (this.#state === 'created') {
      this.#cleanupStore();
      this.#setState('stopped');
      this.#resolveDone();
      return;
    }
    if (this.#state === 'stopped' || this.#state === 'failed') return;
    this.#setState('stopping');
    await this.#starting?.catch(() => undefined);
    // #start may have failed meanwhile.
    if ((this.#state as BotState) === 'failed') return;
    // Slots first: a running slot still records its intents through the pipeline.
    await this.schedules?.stop();
    this.#intake.abort(new AbortError('the bot is stopping'));
    await this.#ingestTask;
    await this.#tracker.drain(this.#o.stopGraceMs ?? 10_000);
    this.#completionsAbort.abort(new AbortError('the bot is stopping'));
    await this.#completionsTask;
    this.#tracker.close();
    this.#saveCheckpoint();
    this.#cleanupStore();
    if (this.#state === 'stopping') this.#setState('stopped');
    this.#resolveDone();
  }

  async #fail(err: unknown): Promise<void> {
    if (this.#state === 'failed' || this.#state === 'stopped') return;
    this.#error = err;
    this.#log.error({ ...errorLogFields(err) }, 'bot failed');
    void this.schedules?.stop();
    this.#intake.abort(new AbortError('the bot failed'));
    this.#completionsAbort.abort(new AbortError('the bot failed'));
    this.#tracker.close();
    this.#setState('failed');
    // The tasks are not awaited: one of them is the caller. Both end at their aborted signal.
    await Promise.resolve();
    this.#saveCheckpoint();
    this.#cleanupStore();
    this.#resolveDone();
  }

  /** Background tasks never reject: a failure fails the bot. */
  #guard(task: Promise<void>): Promise<void> {
    return task.catch(async (err: unknown) => {
      if (isAbort(err) && (this.#intake.signal.aborted || this.#completionsAbort.signal.aborted)) {
        return;
      }
      await this.#fail(err);
    });
  }

  #setState(next: BotState): void {
    const previous = this.#state;
    if (previous === next) return;
    this.#state = next;
    this.#log.info({ from: previous, state: next }, 'bot state changed');
    this.events.emit('state', next, previous);
  }

  #saveCheckpoint(): void {
    const offset = this.#lastProcessed;
    if (offset === undefined) return;
    try {
      this.#o.store.batch(() => this.#o.store.advanceCheckpoint(offset));
    } catch (err) {
      this.#log.warn({ offset, ...errorLogFields(err) }, 'cannot save the checkpoint');
    }
  }

  #cleanupStore(): void {
    if (this.#o.closeStore === false) return;
    try {
      this.#o.store.close();
    } catch (err) {
      this.#log.warn({ ...errorLogFields(err) }, 'cannot close the store');
    }
  }

  // ---- ingestion ----

  async #runIngest(begin: number): Promise<void> {
    await this.#resumeOpenIntents();
    const format = this.plan.updateFormat;
    if (format === null) return; // schedule rules only: nothing to read
    let from = begin;
    let failures = 0;
    const signal = this.#intake.signal;
    for (;;) {
      const stream = this.#o.ledger.updates(
        { beginExclusive: from, updateFormat: format },
        {
          signal,
          onReconnect: () => {
            this.metrics.reconnects.updates += 1;
          },
          ...(this.#o.streamBackoff === undefined ? {} : { backoff: this.#o.streamBackoff }),
        },
      );
      try {
        for await (const element of stream) {
          await this.#ingest(element);
          from = element.offset;
          failures = 0;
        }
        // An open-ended stream only ends when aborted; reopen otherwise.
        if (signal.aborted) return;
      } catch (err) {
        if (signal.aborted) return;
        from = this.#lastProcessed ?? from;
        if (isPruned(err)) {
          from = await this.#skipPruned('updates', from, err);
          continue;
        }
        if (!isAuthFailure(err)) {
          throw new RuntimeError(
            'STREAM_FAILED',
            `the updates stream failed: ${(err as Error).message}`,
            { cause: err },
          );
        }
        await this.#restartDelay('updates', failures++, err);
      }
    }
  }

  /** Hands the journal's open intents (from earlier runs) to the tracker, oldest first. */
  async #resumeOpenIntents(): Promise<void> {
    const seen = new Set<string>();
    let resumed = 0;
    for (;;) {
      const open = this.#o.store
        .openIntents({ limit: 256 })
        .filter((r) => !seen.has(r.commandId) && !this.#tracker.has(r.commandId));
      if (open.length === 0) break;
      for (const record of open) {
        seen.add(record.commandId);
        await this.#admit(record);
        resumed += 1;
      }
    }
    if (resumed > 0) this.#log.info({ intents: resumed }, 'resumed open intents from the journal');
  }

  async #ingest(element: UpdateElement): Promise<void> {
    if (element.kind === 'transaction') {
      await this.#ingestTransaction(element.transaction, element.offset);
    } else {
      // Checkpoints (and updates the rules do not read) move the low-watermark on.
      this.#o.store.batch(() => this.#o.store.advanceCheckpoint(element.offset));
    }
    this.#processed(element.offset);
  }

  async #ingestTransaction(tx: JsTransaction, offset: number): Promise<void> {
    this.metrics.transactionsSeen += 1;
    this.metrics.eventsSeen += tx.events.length;
    const recordMs = Date.parse(tx.recordTime);
    const now = this.#clock.now();
    if (Number.isFinite(recordMs)) this.metrics.streamLagMs = Math.max(0, now - recordMs);
    // CEL `now` is the record time, so every replica and every replay sees the same value.
    const result = evaluateTransaction(this.#index, tx, {
      parties: this.#o.parties,
      now: new Date(Number.isFinite(recordMs) ? recordMs : now),
    });
    for (const e of result.errors) {
      this.metrics.countRuleError(e.ruleId);
      this.#log.warn(
        {
          ruleId: e.ruleId,
          updateId: tx.updateId,
          offset,
          errorCode: e.code,
          file: e.pos.file,
          line: e.pos.line,
          col: e.pos.col,
          phase: e.phase,
          ...(e.actionIndex === null ? {} : { actionIndex: e.actionIndex }),
          ...(e.expression === null ? {} : { expression: e.expression }),
          detail: e.message,
        },
        'rule evaluation failed',
      );
      this.events.emit('rule-error', {
        ruleId: e.ruleId,
        updateId: tx.updateId,
        offset,
        message: e.message,
      });
    }
    const store = this.#o.store;
    if (result.intents.length === 0) {
      store.batch(() => store.advanceCheckpoint(offset));
      return;
    }
    const intents = result.intents.map((i) => this.#newIntent(i, tx, now));
    // Write-ahead: the intents and the checkpoint candidate commit together, before any submit.
    const recorded = store.batch(() => {
      const r = store.recordIntents(intents);
      store.advanceCheckpoint(offset);
      return r;
    });
    for (const record of recorded.inserted) {
      this.metrics.intentsRecorded += 1;
      this.metrics.countTransition('pending');
      logIntent(this.#log, record, null);
      this.events.emit('intent', {
        commandId: record.commandId,
        ruleId: record.ruleId,
        from: null,
        to: 'pending',
        record,
      });
    }
    for (const record of recorded.existing) {
      this.#log.debug(
        { ...intentFields(record), state: record.state },
        'intent already in the journal (replay)',
      );
    }
    const toRun = [
      ...recorded.inserted,
      ...recorded.existing.filter((r) => !isTerminal(r.state) && !this.#tracker.has(r.commandId)),
    ];
    for (const record of toRun) await this.#admit(record);
  }

  async submitIntents(intents: readonly Intent[], context: SlotSubmitContext): Promise<void> {
    if (intents.length === 0) return;
    const store = this.#o.store;
    const now = this.#clock.now();
    const slot = new Date(context.slot).toISOString();
    const recorded = store.batch(() =>
      store.recordIntents(
        intents.map((intent) => {
          const payload = payloadOf(intent);
          const key = intent.triggerKey;
          return {
            commandId: intent.commandId,
            userId: this.#o.userId,
            actAs: intent.actAs,
            ruleId: intent.ruleId,
            revision: intent.revision,
            actionIndex: intent.actionIndex,
            trigger: storeTrigger(key),
            offset: intent.offset,
            payload,
            event: {
              slot,
              snapshotOffset: context.snapshotOffset,
              ...(key.kind === 'slot' && key.contractId !== null
                ? { contractId: key.contractId }
                : {}),
            },
            deadline: now + payload.retry.deadlineMs,
            nextAttemptAt: now,
          };
        }),
      ),
    );
    for (const record of recorded.inserted) {
      this.metrics.intentsRecorded += 1;
      this.metrics.countTransition('pending');
      logIntent(this.#log, record, null);
      this.events.emit('intent', {
        commandId: record.commandId,
        ruleId: record.ruleId,
        from: null,
        to: 'pending',
        record,
      });
    }
    const toRun = [
      ...recorded.inserted,
      ...recorded.existing.filter((r) => !isTerminal(r.state) && !this.#tracker.has(r.commandId)),
    ];
    for (const record of toRun) await this.#admit(record, context.signal);
  }

  #newIntent(intent: Intent, tx: JsTransaction, now: number): NewIntent {
    const payload = payloadOf(intent);
    const event = tx.events.find((e) => nodeIdOf(e) === nodeIdOfTrigger(intent.triggerKey));
    return {
      commandId: intent.commandId,
      userId: this.#o.userId,
      actAs: intent.actAs,
      ruleId: intent.ruleId,
      revision: intent.revision,
      actionIndex: intent.actionIndex,
      trigger: storeTrigger(intent.triggerKey),
      offset: intent.offset,
      payload,
      event: {
        updateId: tx.updateId,
        offset: tx.offset,
        recordTime: tx.recordTime,
        ...(event === undefined ? {} : { event }),
      },
      deadline: now + payload.retry.deadlineMs,
      nextAttemptAt: now,
    };
  }

  /** Waits for a place (this is where ingestion pauses), then hands the intent over. */
  async #admit(record: IntentRecord, signal?: AbortSignal): Promise<void> {
    const concurrency = concurrencyOf(record.payload);
    this.metrics.waitingForAdmission += 1;
    let permit;
    try {
      permit = await this.#admission.acquire(
        record.ruleId,
        concurrency,
        signal === undefined ? this.#intake.signal : AbortSignal.any([this.#intake.signal, signal]),
      );
    } finally {
      this.metrics.waitingForAdmission -= 1;
    }
    this.#tracker.track(record, permit);
  }

  #processed(offset: number): void {
    this.#lastProcessed = offset;
    this.metrics.lastOffset = offset;
    this.events.emit('offset', offset);
  }

  async #skipPruned(stream: string, from: number, err: unknown): Promise<number> {
    const end = await this.#o.ledger.ledgerEnd({ signal: this.#intake.signal });
    const earliest = err instanceof LedgerApiError ? err.error.context.earliest_offset : undefined;
    this.metrics.prunedRestarts += 1;
    this.#log.error(
      {
        stream,
        fromOffset: from,
        toOffset: end,
        skippedOffsets: Math.max(0, end - from),
        ...(earliest === undefined ? {} : { earliestOffset: earliest }),
        errorCode: 'PARTICIPANT_PRUNED_DATA_ACCESSED',
      },
      'THE PARTICIPANT HAS PRUNED THE OFFSETS THE BOT NEEDS: event rules skip to the ledger end; events between fromOffset and toOffset are NOT evaluated',
    );
    this.#o.store.resetCheckpoint(end);
    this.#lastProcessed = end;
    return end;
  }

  async #restartDelay(stream: string, attempt: number, err: unknown): Promise<void> {
    const delayMs = backoffDelay(
      this.#o.restartBackoff ?? DEFAULT_RESTART_BACKOFF,
      attempt,
      this.#random,
    );
    this.#log.error(
      { stream, attempt: attempt + 1, delayMs, ...errorLogFields(err) },
      'the ledger refused the credentials; check the auth config or the token. Retrying',
    );
    await this.#clock.sleep(
      delayMs,
      stream === 'updates' ? this.#intake.signal : this.#completionsAbort.signal,
    );
  }

  // ---- completions ----

  async #runCompletions(begin: number, parties: string[]): Promise<void> {
    let from = begin;
    let failures = 0;
    const signal = this.#completionsAbort.signal;
    for (;;) {
      const stream = this.#o.ledger.completions(
        { userId: this.#o.userId, parties, beginExclusive: from },
        {
          signal,
          onReconnect: () => {
            this.metrics.reconnects.completions += 1;
          },
          ...(this.#o.streamBackoff === undefined ? {} : { backoff: this.#o.streamBackoff }),
        },
      );
      try {
        for await (const element of stream) {
          from = element.offset;
          failures = 0;
          if (element.kind === 'completion') {
            this.#tracker.onCompletion(element.completion, element.offset);
          }
        }
        if (signal.aborted) return;
      } catch (err) {
        if (signal.aborted) return;
        if (isPruned(err)) {
          // The completions of older attempts are gone; the tracker's resubmissions (under the
          // same commandIds) find out what happened through deduplication instead.
          const end = await this.#o.ledger.ledgerEnd({ signal });
          this.#log.warn(
            { stream: 'completions', fromOffset: from, toOffset: end },
            'completions below the pruning offset are gone; following from the ledger end',
          );
          from = end;
          continue;
        }
        if (!isAuthFailure(err)) {
          throw new RuntimeError(
            'STREAM_FAILED',
            `the completions stream failed: ${(err as Error).message}`,
            { cause: err },
          );
        }
        await this.#restartDelay('completions', failures++, err);
      }
    }
  }

  #bucket(ruleId: string, payload: SubmissionPayload): TokenBucket {
    let bucket = this.#buckets.get(ruleId);
    if (bucket === undefined) {
      const rule = this.#o.rules.rules.find((r) => r.id === ruleId);
      const limit = rule?.options.rateLimit ?? payload.rateLimit;
      bucket = new TokenBucket(this.#clock, limit.perSecond, limit.burst);
      this.#buckets.set(ruleId, bucket);
    }
    return bucket;
  }
}

function concurrencyOf(payload: unknown): number {
  const c = (payload as { concurrency?: unknown } | null)?.concurrency;
  return typeof c === 'number' && c >= 1 ? c : 1;
}

function storeTrigger(key: RuleTriggerKey): TriggerKey {
  if (key.kind === 'event') return key;
  return { kind: 'slot', slot: Date.parse(key.slot), contractId: key.contractId ?? '' };
}

function nodeIdOfTrigger(key: RuleTriggerKey): number | undefined {
  return key.kind === 'event' ? key.nodeId : undefined;
}

function nodeIdOf(event: JsTransaction['events'][number]): number | undefined {
  if ('CreatedEvent' in event) return event.CreatedEvent.nodeId;
  if ('ExercisedEvent' in event) return event.ExercisedEvent.nodeId;
  if ('ArchivedEvent' in event) return event.ArchivedEvent.nodeId;
  return undefined;
}

function isAbort(err: unknown): boolean {
  return err instanceof AbortError;
}

function isPruned(err: unknown): boolean {
  return err instanceof LedgerApiError && err.error.code === 'PARTICIPANT_PRUNED_DATA_ACCESSED';
}

/** A rejected or missing token, after the client's own one refresh: back off, report, retry. */
function isAuthFailure(err: unknown): boolean {
  if (err instanceof AuthError) return true;
  return (
    err instanceof LedgerApiError &&
    (err.status === 401 ||
      err.status === 403 ||
      err.error.grpcCodeValue === 16 ||
      err.error.grpcCodeValue === 7)
  );
}

function errorLogFields(err: unknown): Record<string, unknown> {
  const r = errorRecord(err);
  return { errorCode: r.code, error: r.message };
}
