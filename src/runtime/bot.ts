import { EventEmitter } from 'node:events';
import { AbortError } from '../core/abort-error.js';
import { backoffDelay, type BackoffPolicy } from '../core/backoff.js';
import type { Clock } from '../core/clock.js';
import { IllegalStateError } from '../core/illegal-state-error.js';
import type { Logger } from '../core/logger.js';
import type { Random } from '../core/random.js';
import { AuthError } from '../ledger/auth/auth-error.js';
import { isAuthRejection } from '../ledger/classify.js';
import { LedgerApiError } from '../ledger/ledger-api-error.js';
import type { UpdateElement } from '../ledger/ws/update-stream.js';
import type { JsTransaction } from '../ledger/wire/wire-types.js';
import { commandIdFor, type TriggerKey as RuleTriggerKey } from '../rules/command-id.js';
import type { CompiledRule, RuleSet } from '../rules/compiled-rule.js';
import { evaluateTransaction } from '../rules/evaluate.js';
import type { Intent } from '../rules/evaluation-result.js';
import { indexRules, type RuleIndex } from '../rules/rule-index.js';
import {
  isTerminal,
  type IntentRecord,
  type IntentState,
  type NewIntent,
  type TriggerKey,
} from '../store/store.js';
import { Admission } from './admission.js';
import { BotMetrics } from './bot-metrics.js';
import { errorRecord } from './error-record.js';
import { startOffsetOf } from './start-offset.js';
import { RuntimeError } from './runtime-error.js';
import { payloadOf, type SubmissionPayload } from './submission-payload.js';
import { planSubscription, type SubscriptionPlan } from './subscription-plan.js';
import {
  gapContracts,
  pruneRecoveryPlan,
  prunedUpTo,
  recoveredTransaction,
} from './prune-recovery.js';
import { JournalCompactor } from './journal-compactor.js';
import {
  intentFields,
  logIntent,
  SubmissionTracker,
  type IntentEvent,
} from './submission-tracker.js';
import { TokenBucket } from './token-bucket.js';
import type { ScheduleDriver } from '../schedule/schedule-driver.js';
import type { SlotSubmitContext } from '../schedule/run-slot.js';
import { botSchedules } from './bot-schedules.js';
import type { BotOptions } from './bot-options.js';
import { compileBotOptions, type CompiledBotOptions } from './compile-bot-options.js';
import { diffRuleSets, isEmptyDiff, ruleContentHash, type RuleSetDiff } from './rule-set-diff.js';

export type BotState = 'created' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

export type { BotOptions, BotSubmissionOptions } from './bot-options.js';

/** A rule as the ops endpoints show it. */
export type RuleStatus = {
  readonly id: string;
  readonly revision: number;
  readonly trigger: 'created' | 'exercised' | 'archived' | 'schedule';
  /**
   * `paused`: its events wait (the checkpoint holds at `pausedAtOffset`); `resuming`: the events
   * that arrived while it was paused are being evaluated; `disabled`: `enabled: false`.
   */
  readonly state: 'active' | 'paused' | 'resuming' | 'disabled';
  /** Epoch ms the pause began (paused and resuming only). */
  readonly pausedAt?: number;
  readonly pausedAtOffset?: number;
  readonly file: string;
  readonly line: number;
  /** See `ruleContentHash`. */
  readonly hash: string;
};

/** The latest state of one intent this process saw change. */
export type IntentSummary = {
  readonly commandId: string;
  readonly ruleId: string;
  readonly state: IntentState;
  readonly attempts: number;
  readonly offset: number;
  /** Epoch ms. */
  readonly updatedAt: number;
  readonly error?: { readonly code: string; readonly message: string };
};

/** What the bot emits, for the demo's account, the ops layer and tests. */
export type BotEventMap = {
  state: [state: BotState, previous: BotState];
  intent: [event: IntentEvent];
  /** An element of the updates stream was processed (its intents recorded). */
  offset: [offset: number];
  'rule-error': [error: { ruleId: string; updateId: string; offset: number; message: string }];
  /** Shadow mode: an intent that would have been submitted. */
  'shadow-intent': [intent: Intent];
  /** The rules were swapped (`reloadRules`). */
  reload: [diff: RuleSetDiff];
  /** A paused rule caught up with the events of its pause and is active again. */
  resumed: [ruleId: string];
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
  readonly shadow: boolean;
  /** The rules in effect. */
  readonly rules: RuleSet;
  /** Every rule and whether it is active, paused or disabled. */
  ruleStatus(): RuleStatus[];
  /**
   * Stops evaluating the rule's new events until `resumeRule`; the checkpoint stays at the
   * offset where the pause began so nothing is lost, even across a restart (which starts every
   * rule active and replays from there). Idempotent. Throws RuntimeError UNKNOWN_RULE,
   * RULE_DISABLED, RULE_RESUMING or NOT_RUNNING.
   */
  pauseRule(ruleId: string): RuleStatus;
  /**
   * The rule takes part in the live evaluation again at once, and the events that arrived while
   * it was paused are read again (a bounded stream) and evaluated for this rule only; then the
   * checkpoint hold is released. Idempotent.
   */
  resumeRule(ruleId: string): RuleStatus;
  /**
   * Swaps the rules atomically (between two events): events after the last one evaluated are
   * evaluated by the new set only. A changed subscription filter resubscribes from that offset,
   * a widened set of acting parties reopens the completions stream, and changed schedule rules
   * restart the schedule driver. Paused rules stay paused (removed ones are dropped). Throws
   * RuntimeError UNKNOWN_PARTY (the old rules keep running).
   */
  reloadRules(ruleSet: RuleSet): RuleSetDiff;
  /**
   * An operator's retry of a dead letter: back to `pending` (attempts reset, a fresh deadline)
   * and into the pipeline under the same commandId. Throws RuntimeError NOT_DEAD_LETTERED
   * (unknown id or not dead-lettered), NOT_RUNNING or SHADOW.
   */
  retryDeadLetter(commandId: string): IntentRecord;
  /** The latest intent state changes of this process, newest first (at most 50). */
  recentIntents(): IntentSummary[];
  /** The stored checkpoint (undefined before the first, or once the store is closed). */
  checkpoint(): number | undefined;
  /** The last offset of the updates stream processed (the start offset before the first). */
  processedOffset(): number | undefined;
  /** Epoch ms `start()` was called. */
  readonly startedAt: number | undefined;
};

const RECENT_INTENTS = 50;

/** Creates a bot; does no I/O (see `start`). Throws RuntimeError when a rule's party is unknown. */
export function createBot(options: BotOptions): Bot {
  return new TriggerBot(options);
}

type PauseState = {
  readonly since: number;
  /** Events after this offset were not evaluated for the rule; the checkpoint holds here. */
  readonly offset: number;
  resuming: boolean;
};

class TriggerBot implements Bot {
  readonly metrics = new BotMetrics();
  readonly events = new EventEmitter<BotEventMap>();
  readonly done: Promise<void>;
  readonly shadow: boolean;

  readonly #o: CompiledBotOptions;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #log: Logger;
  #rules: RuleSet;
  #plan: SubscriptionPlan;
  /** The rules the live stream is evaluated with: all but the paused ones. */
  #index: RuleIndex;
  #schedules: ScheduleDriver | undefined;
  /** Serialises schedule driver swaps on reload. */
  #schedulesSwap: Promise<void> = Promise.resolve();
  readonly #paused = new Map<string, PauseState>();
  readonly #replays = new Set<Promise<void>>();
  /** The offset of the last stream element evaluated (set synchronously with the evaluation). */
  #evaluatedThrough: number | undefined;
  /** Aborts the current updates stream (not intake) so the loop resubscribes with a new filter. */
  #updatesAbort = new AbortController();
  #updatesGen = 0;
  /** Wakes an ingest loop that has no filter (schedule rules only) when a reload adds one. */
  #planChanged: (() => void) | undefined;
  #completionsRestart = new AbortController();
  #completionParties: string[] = [];
  readonly #recent = new Map<string, IntentSummary>();
  #startedAt: number | undefined;
  readonly #admission: Admission;
  readonly #tracker: SubmissionTracker;
  readonly #compactor: JournalCompactor;
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

  constructor(input: BotOptions) {
    const options = compileBotOptions(input);
    this.#o = options;
    this.#clock = options.clock;
    this.#random = options.random;
    this.#log = options.logger.child({ component: 'runtime' });
    this.shadow = options.shadow;
    this.#rules = options.rules;
    this.#index = indexRules(options.rules);
    this.#plan = planSubscription(options.rules, options.parties);
    this.#admission = new Admission(options.submission.maxInFlight);
    this.#tracker = new SubmissionTracker({
      ledger: options.ledger,
      store: options.store,
      clock: this.#clock,
      random: this.#random,
      logger: this.#log,
      userId: options.userId,
      completionTimeoutMs: options.submission.completionTimeoutMs,
      dedup: options.submission.dedup,
      metrics: this.metrics,
      rateLimiter: (ruleId, payload) => this.#bucket(ruleId, payload),
      onIntent: (event) => this.#onIntent(event),
    });
    this.#compactor = new JournalCompactor({
      store: options.store,
      clock: this.#clock,
      logger: this.#log,
      retentionMs: options.retentionMs,
      onCompacted: (deleted) => (this.metrics.compactedIntents += deleted),
    });
    this.done = new Promise((resolve) => (this.#resolveDone = resolve));
    this.#schedules = this.#makeSchedules(options.rules);
  }

  #makeSchedules(rules: RuleSet): ScheduleDriver | undefined {
    const o = this.#o;
    if (!o.schedule.drive || this.shadow) return undefined;
    return botSchedules({
      rules,
      parties: o.parties,
      ledger: o.ledger,
      journal: o.store,
      sink: this,
      clock: this.#clock,
      random: this.#random,
      logger: o.logger,
      options: o.schedule,
    });
  }

  get plan(): SubscriptionPlan {
    return this.#plan;
  }

  get rules(): RuleSet {
    return this.#rules;
  }

  get schedules(): ScheduleDriver | undefined {
    return this.#schedules;
  }

  get startedAt(): number | undefined {
    return this.#startedAt;
  }

  #onIntent(event: IntentEvent): void {
    const r = event.record;
    this.#recent.delete(r.commandId);
    const error = event.error ?? errorRecordOfUnknown(r.lastError);
    this.#recent.set(r.commandId, {
      commandId: r.commandId,
      ruleId: r.ruleId,
      state: r.state,
      attempts: r.attempts,
      offset: r.offset,
      updatedAt: r.updatedAt,
      ...(error === undefined ? {} : { error: { code: error.code, message: error.message } }),
    });
    if (this.#recent.size > RECENT_INTENTS) {
      const oldest = this.#recent.keys().next().value;
      if (oldest !== undefined) this.#recent.delete(oldest);
    }
    this.events.emit('intent', event);
    if (isTerminal(event.to)) this.metrics.forgetEventTime(r.commandId);
  }

  recentIntents(): IntentSummary[] {
    return [...this.#recent.values()].reverse();
  }

  checkpoint(): number | undefined {
    try {
      return this.#o.store.checkpoint();
    } catch {
      return undefined; // closed
    }
  }

  processedOffset(): number | undefined {
    return this.#lastProcessed ?? this.#evaluatedThrough;
  }

  // ---- operations: pause, resume, reload, dead-letter retry ----

  ruleStatus(): RuleStatus[] {
    return this.#rules.rules.map((rule) => this.#statusOf(rule));
  }

  #statusOf(rule: CompiledRule): RuleStatus {
    const p = this.#paused.get(rule.id);
    return {
      id: rule.id,
      revision: rule.revision,
      trigger: rule.trigger.kind,
      state: !rule.enabled
        ? 'disabled'
        : p === undefined
          ? 'active'
          : p.resuming
            ? 'resuming'
            : 'paused',
      ...(p === undefined ? {} : { pausedAt: p.since, pausedAtOffset: p.offset }),
      file: rule.pos.file,
      line: rule.pos.line,
      hash: ruleContentHash(rule),
    };
  }

  #controllable(ruleId: string): CompiledRule {
    if (this.#state !== 'running') {
      throw new RuntimeError(
        'NOT_RUNNING',
        `the bot is ${this.#state}; rules can be paused and resumed while it runs`,
      );
    }
    const rule = this.#rules.rules.find((r) => r.id === ruleId);
    if (rule === undefined) {
      throw new RuntimeError('UNKNOWN_RULE', `no rule with id "${ruleId}"`);
    }
    if (!rule.enabled) {
      throw new RuntimeError(
        'RULE_DISABLED',
        `rule "${ruleId}" has enabled: false in ${rule.pos.file}; enable it there and reload`,
      );
    }
    return rule;
  }

  pauseRule(ruleId: string): RuleStatus {
    const rule = this.#controllable(ruleId);
    const p = this.#paused.get(ruleId);
    if (p?.resuming === true) {
      throw new RuntimeError(
        'RULE_RESUMING',
        `rule "${ruleId}" is still evaluating the events of its last pause; pause it again once it is active`,
      );
    }
    if (p === undefined) {
      const offset = this.#evaluatedThrough ?? this.checkpoint() ?? 0;
      this.#paused.set(ruleId, { since: this.#clock.now(), offset, resuming: false });
      this.#rebuildIndex();
      this.#log.info(
        { ruleId, offset },
        'rule paused; the checkpoint holds here until it is resumed',
      );
    }
    return this.#statusOf(rule);
  }

  resumeRule(ruleId: string): RuleStatus {
    const rule = this.#controllable(ruleId);
    const p = this.#paused.get(ruleId);
    if (p === undefined || p.resuming) return this.#statusOf(rule);
    const to = this.#evaluatedThrough ?? p.offset;
    p.resuming = true;
    // From here on the live stream evaluates the rule again; the replay covers (p.offset, to].
    this.#rebuildIndex();
    this.#log.info(
      { ruleId, fromOffset: p.offset, toOffset: to },
      'rule resumed; evaluating the events of its pause',
    );
    const task = this.#replay(rule, p, to).finally(() => this.#replays.delete(task));
    this.#replays.add(task);
    return this.#statusOf(rule);
  }

  /** Reads (from, to] again and evaluates it for `rule` only, retrying until done or stopped. */
  async #replay(rule: CompiledRule, p: PauseState, to: number): Promise<void> {
    const signal = this.#intake.signal;
    const index = indexRules([rule]);
    const format = planSubscription({ rules: [rule], warnings: [] }, this.#o.parties).updateFormat;
    let from = p.offset;
    for (let attempt = 0; format !== null && from < to; attempt++) {
      try {
        const stream = this.#o.ledger.updates(
          { beginExclusive: from, endInclusive: to, updateFormat: format },
          {
            signal,
            ...this.#streamBackoff,
          },
        );
        for await (const element of stream) {
          if (element.kind === 'transaction') {
            await this.#ingestTransaction(element.transaction, element.offset, index, false);
          }
          from = element.offset;
        }
        break;
      } catch (err) {
        if (signal.aborted) return; // the hold stays: a restart replays from it
        const delayMs = this.#restartDelayMs(attempt);
        this.#log.error(
          { ruleId: rule.id, fromOffset: from, toOffset: to, delayMs, ...errorLogFields(err) },
          'cannot read the events of the pause yet; the rule stays resuming, retrying',
        );
        await this.#clock.sleep(delayMs, signal).catch(() => undefined);
        if (signal.aborted) return;
      }
    }
    if (this.#paused.get(rule.id) !== p) return;
    this.#paused.delete(rule.id);
    this.#saveCheckpoint();
    this.#log.info({ ruleId: rule.id, fromOffset: p.offset, toOffset: to }, 'rule active again');
    this.events.emit('resumed', rule.id);
  }

  #rebuildIndex(): void {
    this.#index = indexRules(
      this.#rules.rules.filter((r) => this.#paused.get(r.id)?.resuming !== false),
    );
  }

  reloadRules(ruleSet: RuleSet): RuleSetDiff {
    if (this.#state === 'stopping' || this.#state === 'stopped' || this.#state === 'failed') {
      throw new RuntimeError('NOT_RUNNING', `the bot is ${this.#state}; it cannot take new rules`);
    }
    const plan = planSubscription(ruleSet, this.#o.parties); // throws before anything changes
    const diff = diffRuleSets(this.#rules, ruleSet);
    const before = this.#rules;
    const beforePlan = this.#plan;
    const ids = new Set(ruleSet.rules.map((r) => r.id));
    for (const [id, p] of this.#paused) {
      // A removed rule's events are not wanted any more; a resuming one finishes its replay.
      if (!ids.has(id) && !p.resuming) this.#paused.delete(id);
    }
    this.#rules = ruleSet;
    this.#plan = plan;
    this.#rebuildIndex();
    for (const v of [...diff.changed, ...diff.removed]) this.#buckets.delete(v.id);
    this.metrics.reloads.applied += 1;
    this.#log.info(
      {
        added: diff.added.map(describeVersion),
        removed: diff.removed.map(describeVersion),
        changed: diff.changed.map(describeVersion),
        unchanged: diff.unchanged,
        offset: this.#evaluatedThrough,
      },
      isEmptyDiff(diff) ? 'rules reloaded: no change' : 'rules reloaded',
    );
    if (this.#state === 'running' || this.#state === 'starting') {
      if (JSON.stringify(beforePlan.updateFormat) !== JSON.stringify(plan.updateFormat)) {
        this.#log.info(
          { offset: this.#evaluatedThrough, readParties: plan.readParties, shape: plan.shape },
          'the subscription filter changed; resubscribing from the last offset evaluated',
        );
        this.#updatesGen += 1;
        this.#updatesAbort.abort(new AbortError('resubscribing with the new filter'));
        this.#updatesAbort = new AbortController();
        this.#planChanged?.();
      }
      const parties = new Set(this.#completionParties);
      const widened = plan.actAsParties.filter((p) => !parties.has(p));
      if (widened.length > 0) {
        this.#completionParties = [...parties, ...widened].sort();
        this.#completionsRestart.abort(new AbortError('new acting parties'));
        this.#completionsRestart = new AbortController();
      }
      if (schedulesDiffer(before, ruleSet)) this.#swapSchedules(ruleSet);
    } else if (schedulesDiffer(before, ruleSet)) {
      this.#schedules = this.#makeSchedules(ruleSet);
    }
    this.events.emit('reload', diff);
    return diff;
  }

  #swapSchedules(ruleSet: RuleSet): void {
    this.#schedulesSwap = this.#schedulesSwap
      .then(async () => {
        const old = this.#schedules;
        await old?.stop();
        if (this.#state !== 'running' && this.#state !== 'starting') return;
        this.#schedules = this.#makeSchedules(ruleSet);
        this.#schedules?.start();
        this.#log.info(
          { schedules: this.#schedules === undefined ? 0 : 1 },
          'schedule rules swapped',
        );
      })
      .catch((err: unknown) => {
        this.#log.error({ ...errorLogFields(err) }, 'cannot restart the schedule driver');
      });
  }

  retryDeadLetter(commandId: string): IntentRecord {
    if (this.shadow) {
      throw new RuntimeError(
        'SHADOW',
        'a shadow bot submits nothing; retry dead letters with the real bot',
      );
    }
    if (this.#state !== 'running') {
      throw new RuntimeError(
        'NOT_RUNNING',
        `the bot is ${this.#state}; a retry needs the running bot`,
      );
    }
    const store = this.#o.store;
    const dead = store.getDeadLetter(commandId);
    if (dead === undefined) {
      throw new RuntimeError('NOT_DEAD_LETTERED', `no dead letter with commandId "${commandId}"`);
    }
    const deadlineMs = deadlineOf(dead.intent.payload);
    const record = store.batch(() =>
      store.requeueDeadLetter(
        commandId,
        deadlineMs === undefined ? {} : { deadline: this.#clock.now() + deadlineMs },
      ),
    );
    this.metrics.countTransition('pending', record.ruleId, null);
    this.#log.info({ ...intentFields(record) }, 'dead letter requeued by an operator');
    this.#onIntent({
      commandId,
      ruleId: record.ruleId,
      from: 'dead-lettered',
      to: 'pending',
      record,
    });
    // Admission may wait for a place; the caller gets the requeued record at once.
    void this.#admit(record).catch((err: unknown) => {
      if (!isAbort(err))
        this.#log.warn({ commandId, ...errorLogFields(err) }, 'cannot admit the requeued intent');
    });
    return record;
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
    this.#startedAt = this.#clock.now();
    this.#starting = this.#start();
    return this.#starting;
  }

  async #start(): Promise<void> {
    try {
      const ledgerEnd = await this.#o.ledger.ledgerEnd({ signal: this.#intake.signal });
      const begin = this.#startOffset(ledgerEnd);
      const open = this.shadow ? [] : this.#o.store.openIntents();
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
          rules: this.#rules.rules.length,
          ...(this.shadow ? { shadow: true } : {}),
        },
        this.shadow
          ? 'bot starting in SHADOW mode: nothing is submitted or stored'
          : 'bot starting',
      );
      this.#evaluatedThrough = begin;
      this.#completionParties = [...parties].sort();
      if (!this.shadow) {
        this.#completionsTask = this.#guard(this.#runCompletions(completionsBegin));
      }
      this.#ingestTask = this.#guard(this.#runIngest(begin));
      if (!this.shadow) this.#compactor.start();
      if (this.#state === 'starting') this.#setState('running');
      this.schedules?.start();
    } catch (err) {
      if (this.#state === 'starting' || this.#state === 'stopping') {
        await this.#fail(err);
      }
      throw err;
    }
  }

  /**
   * See startOffsetOf: the stored checkpoint, else (or with `resetCheckpoint`) `start:`. A start
   * that did not come from the checkpoint is stored as the checkpoint at once, so a restart
   * before any event resumes there (not at a newer ledger end, nor at the checkpoint a reset
   * replaced).
   */
  #startOffset(ledgerEnd: number): number {
    const start = this.#o.start;
    const decision = startOffsetOf(start, this.checkpoint(), ledgerEnd, this.#o.resetCheckpoint);
    if (decision.from !== 'checkpoint' && !this.shadow) {
      this.#o.store.resetCheckpoint(decision.offset);
    }
    if (decision.from === 'reset') {
      this.#log.warn(
        { previousCheckpoint: decision.previous, startOffset: decision.offset, start },
        `checkpoint reset: the stored checkpoint ${decision.previous} is replaced by ${decision.offset} (start: ${start.kind === 'offset' ? start.offset : start.kind})`,
      );
    }
    return decision.offset;
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
    await this.#schedulesSwap;
    await this.schedules?.stop();
    this.#intake.abort(new AbortError('the bot is stopping'));
    await this.#ingestTask;
    await Promise.all(this.#replays);
    await this.#tracker.drain(this.#o.stopGraceMs);
    this.#completionsAbort.abort(new AbortError('the bot is stopping'));
    await this.#completionsTask;
    this.#tracker.close();
    this.#compactor.stop();
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
    this.#compactor.stop();
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
    if (offset === undefined || this.shadow) return;
    try {
      this.#o.store.batch(() => this.#advance(offset));
    } catch (err) {
      this.#log.warn({ offset, ...errorLogFields(err) }, 'cannot save the checkpoint');
    }
  }

  #cleanupStore(): void {
    if (!this.#o.closeStore) return;
    try {
      this.#o.store.close();
    } catch (err) {
      this.#log.warn({ ...errorLogFields(err) }, 'cannot close the store');
    }
  }

  // ---- ingestion ----

  async #runIngest(begin: number): Promise<void> {
    if (!this.shadow) await this.#resumeOpenIntents();
    let from = begin;
    let failures = 0;
    const signal = this.#intake.signal;
    for (;;) {
      if (signal.aborted) return;
      const format = this.#plan.updateFormat;
      if (format === null) {
        // Schedule rules only: nothing to read, unless a reload adds event rules. Those start at
        // the ledger end of that moment, not at the events before they existed.
        await new Promise<void>((resolve) => {
          this.#planChanged = resolve;
          signal.addEventListener('abort', () => resolve(), { once: true });
        });
        this.#planChanged = undefined;
        if (signal.aborted) return;
        if (this.#plan.updateFormat !== null) {
          from = await this.#o.ledger.ledgerEnd({ signal });
          this.#evaluatedThrough = from;
        }
        continue;
      }
      const generation = this.#updatesGen;
      const stream = this.#o.ledger.updates(
        { beginExclusive: from, updateFormat: format },
        {
          signal: AbortSignal.any([signal, this.#updatesAbort.signal]),
          onReconnect: () => {
            this.metrics.reconnects.updates += 1;
          },
          onOpen: () => this.metrics.streamOpened('updates'),
          onClose: () => this.metrics.streamClosed('updates'),
          ...this.#streamBackoff,
        },
      );
      try {
        for await (const element of stream) {
          // A reload changed the filter: the new stream starts after the last element processed.
          if (generation !== this.#updatesGen) break;
          await this.#ingest(element);
          from = element.offset;
          failures = 0;
        }
        // An open-ended stream only ends when aborted (or resubscribed); reopen otherwise.
        if (signal.aborted) return;
      } catch (err) {
        if (signal.aborted) return;
        from = this.#lastProcessed ?? from;
        if (generation !== this.#updatesGen) continue;
        if (isPruned(err)) {
          from = await this.#recoverPruned(from, err);
          continue;
        }
        await this.#restartAfterAuthFailure('updates', failures++, err);
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
    // Set in the same synchronous run as the evaluation below: a pause, resume or reload (which
    // are synchronous too) always falls between two elements.
    this.#evaluatedThrough = element.offset;
    if (element.kind === 'transaction') {
      await this.#ingestTransaction(element.transaction, element.offset, this.#index, true);
    } else if (!this.shadow) {
      // Checkpoints (and updates the rules do not read) move the low-watermark on.
      this.#o.store.batch(() => this.#advance(element.offset));
    }
    this.#processed(element.offset);
  }

  /** The checkpoint candidate, held at the offset where the earliest current pause began. */
  #advance(offset: number): void {
    let hold = offset;
    for (const p of this.#paused.values()) hold = Math.min(hold, p.offset);
    this.#o.store.advanceCheckpoint(hold);
  }

  /**
   * Evaluates one transaction with `index`, records the intents (and with `live`, the checkpoint
   * candidate) in one batch, and admits them. A replay of a resumed rule passes its own index and
   * `live: false`: its events are below the held checkpoint already.
   */
  async #ingestTransaction(
    tx: JsTransaction,
    offset: number,
    index: RuleIndex,
    live: boolean,
    recovery?: RecoveryCounts,
  ): Promise<void> {
    if (live) {
      this.metrics.transactionsSeen += 1;
      this.metrics.eventsSeen += tx.events.length;
    }
    const recordMs = Date.parse(tx.recordTime);
    const now = this.#clock.now();
    if (live && Number.isFinite(recordMs)) {
      this.metrics.streamLagMs = Math.max(0, now - recordMs);
    }
    // CEL `now` is the record time, so every replica and every replay sees the same value.
    const result = evaluateTransaction(index, tx, {
      parties: this.#o.parties,
      now: new Date(Number.isFinite(recordMs) ? recordMs : now),
    });
    for (const x of result.explanations) {
      if (x.triggerMatched) {
        this.metrics.countMatch(
          x.ruleId,
          x.conditions.some((c) => c.outcome === 'false'),
        );
      }
    }
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
    const fired =
      recovery === undefined ? result.intents : this.#rekeyRecovered(result.intents, tx, recovery);
    if (this.shadow) {
      for (const intent of fired) this.#shadowIntent(intent, tx.updateId);
      return;
    }
    const store = this.#o.store;
    if (fired.length === 0) {
      if (live) store.batch(() => this.#advance(offset));
      return;
    }
    const intents = fired.map((i) => this.#newIntent(i, tx, now));
    // Write-ahead: the intents and the checkpoint candidate commit together, before any submit.
    const recorded = store.batch(() => {
      const r = store.recordIntents(intents);
      if (live) this.#advance(offset);
      return r;
    });
    if (recovery !== undefined) {
      recovery.intents += recorded.inserted.length;
      recovery.known += recorded.existing.length;
    }
    for (const record of recorded.inserted) {
      this.metrics.countRecorded(record.ruleId);
      this.metrics.countTransition('pending', record.ruleId, null);
      this.metrics.noteEventTime(record.commandId, recordMs);
      logIntent(this.#log, record, null);
      this.#onIntent({
        commandId: record.commandId,
        ruleId: record.ruleId,
        from: null,
        to: 'pending',
        record,
      });
    }
    for (const record of recorded.existing) {
      if (!isTerminal(record.state)) this.metrics.noteEventTime(record.commandId, recordMs);
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

  #shadowIntent(intent: Intent, updateId: string | undefined): void {
    this.metrics.shadowIntents += 1;
    this.#log.info(
      {
        ruleId: intent.ruleId,
        commandId: intent.commandId,
        offset: intent.offset,
        ...(updateId === undefined ? {} : { updateId }),
        actionIndex: intent.actionIndex,
        actAs: intent.actAs,
        command: intent.command,
        shadow: true,
      },
      'shadow: would submit',
    );
    this.events.emit('shadow-intent', intent);
  }

  async submitIntents(intents: readonly Intent[], context: SlotSubmitContext): Promise<void> {
    if (intents.length === 0) return;
    if (this.shadow) {
      for (const intent of intents) this.#shadowIntent(intent, undefined);
      return;
    }
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
      this.metrics.countRecorded(record.ruleId);
      this.metrics.countTransition('pending', record.ruleId, null);
      logIntent(this.#log, record, null);
      this.#onIntent({
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
    return newIntentOf(intent, tx, now, this.#o.userId);
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

  // ---- pruning ----

  /**
   * The updates stream hit offsets the participant pruned (PARTICIPANT_PRUNED_DATA_ACCESSED).
   * Evaluates the `created` rules on the contracts created in the pruned range that are still
   * active at the pruning offset, then resumes the stream there (see docs/runtime.md, pruning).
   * Retries with backoff until it gets through or the bot stops. Returns the resume offset.
   */
  async #recoverPruned(from: number, err: unknown): Promise<number> {
    const signal = this.#intake.signal;
    const earliest = err instanceof LedgerApiError ? err.error.context.earliest_offset : undefined;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#recoverPrunedOnce(from, earliest);
      } catch (e) {
        if (signal.aborted) throw e;
        const delayMs = this.#restartDelayMs(attempt);
        this.#log.error(
          { stream: 'updates', fromOffset: from, delayMs, ...errorLogFields(e) },
          'cannot recover from the pruning yet (the pruning offset or the active contracts could not be read); retrying',
        );
        await this.#clock.sleep(delayMs, signal);
      }
    }
  }

  async #recoverPrunedOnce(from: number, earliest: string | undefined): Promise<number> {
    const signal = this.#intake.signal;
    const ledger = this.#o.ledger;
    const pruned = await prunedUpTo(ledger, { signal });
    if (pruned <= from) {
      // The participant says nothing above `from` is pruned although the stream said so: try
      // again after a backoff rather than resubscribing in a hot loop.
      throw new RuntimeError(
        'PRUNING_OFFSET_UNCLEAR',
        `the updates stream from offset ${from} was refused as pruned, but the participant reports pruning only up to ${pruned}`,
      );
    }
    const ledgerEnd = await ledger.ledgerEnd({ signal });
    // Paused rules stay paused: their checkpoint hold cannot survive the pruning anyway.
    const rules = this.#rules.rules.filter((r) => this.#paused.get(r.id)?.resuming !== false);
    const plan = pruneRecoveryPlan({ rules, warnings: [] }, this.#o.parties);
    const counts: RecoveryCounts = { at: pruned, contracts: 0, intents: 0, known: 0 };
    if (plan.eventFormat !== null) {
      const contracts = gapContracts(
        ledger,
        { at: pruned, after: from, eventFormat: plan.eventFormat },
        signal,
      );
      for await (const { created, synchronizerId } of contracts) {
        counts.contracts += 1;
        const tx = recoveredTransaction(created, synchronizerId);
        await this.#ingestTransaction(tx, tx.offset, this.#index, false, counts);
      }
    }
    this.metrics.prunedRestarts += 1;
    this.#log.error(
      {
        stream: 'updates',
        errorCode: 'PARTICIPANT_PRUNED_DATA_ACCESSED',
        fromOffset: from,
        toOffset: pruned,
        skippedOffsets: pruned - from,
        ledgerEnd,
        ...(earliest === undefined ? {} : { earliestOffset: earliest }),
        replayedContracts: counts.contracts,
        replayedIntents: counts.intents,
        alreadyInJournal: counts.known,
        notRecoveredRules: plan.lostRules,
      },
      'THE PARTICIPANT HAS PRUNED OFFSETS THE BOT HAD NOT READ: created rules were evaluated on the contracts created between fromOffset and toOffset that are still active; contracts created AND archived in that range, and its exercises and archives (notRecoveredRules), are LOST. Resuming at toOffset',
    );
    // Only now: a crash during the recovery repeats it, and the journal check in
    // #rekeyRecovered keeps the repeat from firing twice.
    if (!this.shadow) this.#o.store.resetCheckpoint(pruned);
    this.#lastProcessed = pruned;
    this.#evaluatedThrough = pruned;
    return pruned;
  }

  /**
   * The intents of a contract recovered from the active contract set, keyed by its contract id
   * (its creating update is pruned, so the live key cannot be rebuilt) and justified by the
   * read of the active contract set at the pruning offset, where their dedup period is anchored
   * (the creation offset is pruned: the participant would refuse it). A rule whose intent for
   * this creation is already in the journal under the live key is left out: an earlier run saw
   * the creation on the stream, and that intent resumes from the journal. One recovered before
   * has the same commandId, so `recordIntents` finds it.
   */
  #rekeyRecovered(intents: readonly Intent[], tx: JsTransaction, counts: RecoveryCounts): Intent[] {
    const first = tx.events[0];
    if (first === undefined || !('CreatedEvent' in first)) return [];
    const created = first.CreatedEvent;
    const triggerKey: RuleTriggerKey = { kind: 'contract', contractId: created.contractId };
    const out: Intent[] = [];
    for (const intent of intents) {
      if (this.#o.store.hasEventIntent(intent.ruleId, created.offset, created.nodeId)) {
        counts.known += 1;
        continue;
      }
      out.push({
        ...intent,
        triggerKey,
        offset: counts.at,
        commandId: commandIdFor({
          ruleId: intent.ruleId,
          revision: intent.revision,
          actAs: intent.actAs,
          triggerKey,
          actionIndex: intent.actionIndex,
        }),
      });
    }
    return out;
  }

  /** An auth failure backs off before the stream reopens; any other stream failure is fatal. */
  async #restartAfterAuthFailure(
    stream: 'updates' | 'completions',
    attempt: number,
    err: unknown,
  ): Promise<void> {
    if (!isAuthFailure(err)) {
      throw new RuntimeError(
        'STREAM_FAILED',
        `the ${stream} stream failed: ${(err as Error).message}`,
        { cause: err },
      );
    }
    const delayMs = this.#restartDelayMs(attempt);
    this.#log.error(
      { stream, attempt: attempt + 1, delayMs, ...errorLogFields(err) },
      'the ledger refused the credentials; check the auth config or the token. Retrying',
    );
    await this.#clock.sleep(
      delayMs,
      stream === 'updates' ? this.#intake.signal : this.#completionsAbort.signal,
    );
  }

  /** The client's websocket reconnect backoff, as every stream the bot opens passes it. */
  get #streamBackoff(): { readonly backoff?: BackoffPolicy } {
    return this.#o.streamBackoff === undefined ? {} : { backoff: this.#o.streamBackoff };
  }

  #restartDelayMs(attempt: number): number {
    return backoffDelay(this.#o.restartBackoff, attempt, this.#random);
  }

  // ---- completions ----

  async #runCompletions(begin: number): Promise<void> {
    let from = begin;
    let failures = 0;
    const signal = this.#completionsAbort.signal;
    for (;;) {
      const parties = this.#completionParties;
      if (parties.length === 0) {
        // No rule acts as anyone yet: wait for a reload that adds one.
        await new Promise<void>((resolve) => {
          const done = (): void => resolve();
          signal.addEventListener('abort', done, { once: true });
          this.#completionsRestart.signal.addEventListener('abort', done, { once: true });
        });
        if (signal.aborted) return;
        continue;
      }
      const restart = this.#completionsRestart.signal;
      const stream = this.#o.ledger.completions(
        { userId: this.#o.userId, parties, beginExclusive: from },
        {
          signal: AbortSignal.any([signal, restart]),
          onReconnect: () => {
            this.metrics.reconnects.completions += 1;
          },
          onOpen: () => this.metrics.streamOpened('completions'),
          onClose: () => this.metrics.streamClosed('completions'),
          ...this.#streamBackoff,
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
        if (restart.aborted) continue; // a reload widened the parties: reopen from `from`
        if (isPruned(err)) {
          // The completions of older attempts are gone; the tracker's resubmissions (under the
          // same commandIds) find out what happened through deduplication instead. Resume at
          // the pruning offset, not at the ledger end: a submission made since (a resubmission
          // of this run) may already have completed, and its completion must not be skipped.
          const pruned = await prunedUpTo(this.#o.ledger, { signal }).catch(() => 0);
          const to = pruned > from ? pruned : await this.#o.ledger.ledgerEnd({ signal });
          this.#log.warn(
            { stream: 'completions', fromOffset: from, toOffset: to },
            'completions below the pruning offset are gone; following from the pruning offset',
          );
          from = to;
          continue;
        }
        await this.#restartAfterAuthFailure('completions', failures++, err);
      }
    }
  }

  #bucket(ruleId: string, payload: SubmissionPayload): TokenBucket {
    let bucket = this.#buckets.get(ruleId);
    if (bucket === undefined) {
      const rule = this.#rules.rules.find((r) => r.id === ruleId);
      const limit = rule?.options.rateLimit ?? payload.rateLimit;
      bucket = new TokenBucket(this.#clock, limit.perSecond, limit.burst);
      this.#buckets.set(ruleId, bucket);
    }
    return bucket;
  }
}

function describeVersion(v: { id: string; revision: number; hash: string }): string {
  return `${v.id}@${v.revision}#${v.hash}`;
}

function schedulesDiffer(a: RuleSet, b: RuleSet): boolean {
  const key = (set: RuleSet): string =>
    set.rules
      .filter((r) => r.enabled && r.trigger.kind === 'schedule')
      .map((r) => `${r.id}#${ruleContentHash(r)}`)
      .sort()
      .join(',');
  return key(a) !== key(b);
}

function deadlineOf(payload: unknown): number | undefined {
  const ms = (payload as { retry?: { deadlineMs?: unknown } } | null)?.retry?.deadlineMs;
  return typeof ms === 'number' && ms > 0 ? ms : undefined;
}

function errorRecordOfUnknown(value: unknown): { code: string; message: string } | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const v = value as { code?: unknown; message?: unknown };
  return typeof v.code === 'string' && typeof v.message === 'string'
    ? { code: v.code, message: v.message }
    : undefined;
}

function concurrencyOf(payload: unknown): number {
  const c = (payload as { concurrency?: unknown } | null)?.concurrency;
  return typeof c === 'number' && c >= 1 ? c : 1;
}

/**
 * The journal entry of an intent from a transaction of the update stream (payload, trigger,
 * triggering event), as the bot records it before submitting. Exported for bench/ingest-bench.ts.
 */
export function newIntentOf(
  intent: Intent,
  tx: JsTransaction,
  now: number,
  userId: string,
): NewIntent {
  const payload = payloadOf(intent);
  const key = intent.triggerKey;
  const event =
    key.kind === 'contract'
      ? tx.events.find((e) => 'CreatedEvent' in e && e.CreatedEvent.contractId === key.contractId)
      : tx.events.find((e) => nodeIdOf(e) === nodeIdOfTrigger(key));
  return {
    commandId: intent.commandId,
    userId,
    actAs: intent.actAs,
    ruleId: intent.ruleId,
    revision: intent.revision,
    actionIndex: intent.actionIndex,
    trigger: storeTrigger(key, event),
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

/** One pruning recovery: where it read the active contract set, and counts for its log line. */
type RecoveryCounts = {
  /** The pruning offset: the snapshot read, and the recovered intents' justifying offset. */
  readonly at: number;
  /** Contracts of the active contract set created in the pruned range. */
  contracts: number;
  /** Intents recorded for them. */
  intents: number;
  /** Intents left out because the journal already had them (or their live-key twin). */
  known: number;
};

function storeTrigger(key: RuleTriggerKey, event?: JsTransaction['events'][number]): TriggerKey {
  if (key.kind === 'event') return key;
  if (key.kind === 'contract') {
    const nodeId = event === undefined ? undefined : nodeIdOf(event);
    return { kind: 'contract', contractId: key.contractId, nodeId: nodeId ?? 0 };
  }
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
  return err instanceof AuthError || isAuthRejection(err);
}

function errorLogFields(err: unknown): Record<string, unknown> {
  const r = errorRecord(err);
  return { errorCode: r.code, error: r.message };
}
