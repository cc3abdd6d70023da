import { EventEmitter } from 'node:events';
import { AbortError } from '../core/abort-error.js';
import { IllegalStateError } from '../core/illegal-state-error.js';
import type { Logger } from '../core/logger.js';
import type { RuleSet } from '../rules/compiled-rule.js';
import type { Intent } from '../rules/evaluation-result.js';
import type { SlotSubmitContext } from '../schedule/run-slot.js';
import type { ScheduleDriver } from '../schedule/schedule-driver.js';
import { isTerminal, type IntentRecord } from '../store/store.js';
import type { Bot } from './bot-api.js';
import type { BotEventMap, BotEvents, BotState } from './bot-events.js';
import { BotMetrics } from './bot-metrics.js';
import type { BotOptions } from './bot-options.js';
import { botParts, type BotParts } from './bot-parts.js';
import { runCleanupSteps, type CleanupStep } from './cleanup-steps.js';
import { compileBotOptions, type CompiledBotOptions } from './compile-bot-options.js';
import { completionsStart } from './completions-start.js';
import { errorFields } from './error-record.js';
import { RecentIntents, type IntentSummary } from './recent-intents.js';
import type { RuleStatus } from './rule-book.js';
import { reloadRules } from './rule-reload.js';
import type { RuleSetDiff } from './rule-set-diff.js';
import { RuntimeError } from './runtime-error.js';
import type { IntentEvent } from './submission-tracker.js';
import type { SubscriptionPlan } from './subscription-plan.js';

export type { Bot } from './bot-api.js';
export type { BotEventMap, BotState } from './bot-events.js';
export type { BotOptions, BotSubmissionOptions } from './bot-options.js';
export type { IntentSummary } from './recent-intents.js';
export type { RuleStatus } from './rule-book.js';

/** Creates a bot; does no I/O (see `start`). Throws RuntimeError when a rule's party is unknown. */
export function createBot(options: BotOptions): Bot {
  return new TriggerBot(compileBotOptions(options));
}

/**
 * Lifecycle only: the parts are the rule book, the checkpoint, the intent pipeline (journal or
 * shadow), the update and completion followers, rule control and the schedules, built and
 * connected by `botParts`; `stop()` runs an ordered list of isolated cleanup steps.
 */
class TriggerBot implements Bot {
  readonly metrics = new BotMetrics();
  readonly events: BotEvents = new EventEmitter<BotEventMap>();
  readonly done: Promise<void>;
  readonly shadow: boolean;

  readonly #o: CompiledBotOptions;
  readonly #log: Logger;
  readonly #parts: BotParts;
  readonly #recent = new RecentIntents();
  /** Aborts intake: the updates stream, replays and waits for admission. */
  readonly #intake = new AbortController();
  /** Aborts the completions stream, after the drain. */
  readonly #completionsAbort = new AbortController();
  #state: BotState = 'created';
  #error: unknown = undefined;
  #resolveDone!: () => void;
  #startedAt: number | undefined;
  #starting: Promise<void> | undefined;
  #stopping: Promise<void> | undefined;
  #ingestTask: Promise<void> | undefined;
  #completionsTask: Promise<void> | undefined;

  constructor(o: CompiledBotOptions) {
    this.#o = o;
    this.shadow = o.shadow;
    this.#log = o.logger.child({ component: 'runtime' });
    this.#parts = botParts(o, {
      metrics: this.metrics,
      events: this.events,
      logger: this.#log,
      intake: this.#intake.signal,
      completionsStop: this.#completionsAbort.signal,
      state: () => this.#state,
      onIntent: (event) => this.#onIntent(event),
      assertRunning: (action) => this.#assertRunning(action),
      fail: (err) => void this.#fail(err),
    });
    this.done = new Promise((resolve) => (this.#resolveDone = resolve));
  }

  get state(): BotState {
    return this.#state;
  }

  get error(): unknown {
    return this.#error;
  }

  get plan(): SubscriptionPlan {
    return this.#parts.book.plan;
  }

  get rules(): RuleSet {
    return this.#parts.book.rules;
  }

  get schedules(): ScheduleDriver | undefined {
    return this.#parts.schedules.driver;
  }

  get startedAt(): number | undefined {
    return this.#startedAt;
  }

  submitIntents(intents: readonly Intent[], context: SlotSubmitContext): Promise<void> {
    return this.#parts.pipeline.submitIntents(intents, context);
  }

  ruleStatus(): RuleStatus[] {
    return this.#parts.book.status();
  }

  pauseRule(ruleId: string): RuleStatus {
    return this.#parts.control.pause(ruleId);
  }

  resumeRule(ruleId: string): RuleStatus {
    const status = this.#parts.control.resume(ruleId);
    this.#parts.schedules.resumed(ruleId);
    return status;
  }

  reloadRules(ruleSet: RuleSet): RuleSetDiff {
    return reloadRules(ruleSet, {
      book: this.#parts.book,
      state: () => this.#state,
      checkpoint: this.#parts.checkpoint,
      updates: this.#parts.updates,
      completions: this.#parts.journal?.completions,
      schedules: this.#parts.schedules,
      rateLimits: this.#parts.rateLimits,
      metrics: this.metrics,
      logger: this.#log,
      events: this.events,
    });
  }

  retryDeadLetter(commandId: string): IntentRecord {
    return this.#parts.pipeline.retryDeadLetter(commandId);
  }

  recentIntents(): IntentSummary[] {
    return this.#recent.list();
  }

  checkpoint(): number | undefined {
    return this.#parts.checkpoint.stored();
  }

  processedOffset(): number | undefined {
    return this.#parts.checkpoint.lastProcessed ?? this.#parts.checkpoint.evaluatedThrough;
  }

  #onIntent(event: IntentEvent): void {
    this.#recent.note(event);
    this.events.emit('intent', event);
    if (isTerminal(event.to)) this.metrics.forgetEventTime(event.record.commandId);
  }

  #assertRunning(action: string): void {
    if (this.#state !== 'running') {
      throw new RuntimeError('NOT_RUNNING', `the bot is ${this.#state}; ${action}`);
    }
  }

  // ---- lifecycle ----

  start(): Promise<void> {
    if (this.#state !== 'created') {
      return Promise.reject(
        new IllegalStateError(`start() needs a new bot; this one is ${this.#state}`),
      );
    }
    this.#setState('starting');
    this.#startedAt = this.#o.clock.now();
    this.#starting = this.#start();
    return this.#starting;
  }

  async #start(): Promise<void> {
    try {
      const ledgerEnd = await this.#o.ledger.ledgerEnd({ signal: this.#intake.signal });
      const { start, resetCheckpoint } = this.#o;
      const begin = this.#parts.checkpoint.begin(start, ledgerEnd, resetCheckpoint);
      // A rule whose own checkpoint is further on than `begin` does not evaluate the events up to it.
      this.#parts.book.setFloors(await this.#o.ruleCheckpoints());
      // Before the stream opens: a rule paused elsewhere (a fleet) sees none of its events here.
      this.#parts.control.pauseAtStart(this.#o.pausedAtStart, begin);
      const open = this.#parts.pipeline.openIntents();
      const plan = this.#parts.book.plan;
      const completions = completionsStart(ledgerEnd, open, plan.actAsParties);
      this.#log.info(
        {
          startOffset: begin,
          ledgerEnd,
          completionsOffset: completions.begin,
          openIntents: open.length,
          shape: plan.shape,
          readParties: plan.readParties,
          rules: this.#parts.book.rules.rules.length,
          ...(this.shadow ? { shadow: true, note: 'nothing is submitted or stored' } : {}),
        },
        'bot starting',
      );
      const journal = this.#parts.journal;
      if (journal !== undefined) {
        this.#completionsTask = this.#guard(
          journal.completions.run(completions.begin, completions.parties),
        );
      }
      this.#ingestTask = this.#guard(this.#followUpdates(begin));
      journal?.compactor.start();
      if (this.#state === 'starting') this.#setState('running');
      this.#parts.schedules.start();
    } catch (err) {
      if (this.#state === 'starting' || this.#state === 'stopping') {
        await this.#fail(err);
      }
      throw err;
    }
  }

  /** The journal's open intents first (from earlier runs), then the updates stream. */
  async #followUpdates(begin: number): Promise<void> {
    await this.#parts.pipeline.resumeOpen();
    await this.#parts.updates.run(begin);
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    if (this.#state === 'created') {
      await runCleanupSteps([this.#closeStore], this.#log);
      this.#setState('stopped');
      this.#resolveDone();
      return;
    }
    if (this.#state === 'stopped' || this.#state === 'failed') return;
    this.#setState('stopping');
    await this.#starting?.catch(() => undefined);
    // #start may have failed meanwhile.
    if ((this.#state as BotState) === 'failed') return;
    const journal = this.#parts.journal;
    await runCleanupSteps(
      [
        // Slots first: a running slot still records its intents through the pipeline.
        { name: 'schedules', run: () => this.#parts.schedules.stop() },
        { name: 'intake', run: () => this.#intake.abort(new AbortError('the bot is stopping')) },
        { name: 'updates', run: () => this.#ingestTask },
        { name: 'replays', run: () => this.#parts.control.settled() },
        { name: 'drain', run: () => journal?.tracker.drain(this.#o.stopGraceMs) },
        {
          name: 'completions',
          run: () => {
            this.#completionsAbort.abort(new AbortError('the bot is stopping'));
            return this.#completionsTask;
          },
        },
        { name: 'tracker', run: () => journal?.tracker.close() },
        { name: 'compactor', run: () => journal?.compactor.stop() },
        { name: 'checkpoint', run: () => this.#parts.checkpoint.save() },
        this.#closeStore,
      ],
      this.#log,
    );
    if (this.#state === 'stopping') this.#setState('stopped');
    this.#resolveDone();
  }

  async #fail(err: unknown): Promise<void> {
    if (this.#state === 'failed' || this.#state === 'stopped') return;
    this.#error = err;
    this.#log.error({ ...errorFields(err) }, 'bot failed');
    const journal = this.#parts.journal;
    // The tasks are not awaited: one of them is the caller. Each ends at its aborted signal.
    await runCleanupSteps(
      [
        { name: 'schedules', run: () => void this.#parts.schedules.stop().catch(() => undefined) },
        { name: 'intake', run: () => this.#intake.abort(new AbortError('the bot failed')) },
        {
          name: 'completions',
          run: () => this.#completionsAbort.abort(new AbortError('the bot failed')),
        },
        { name: 'tracker', run: () => journal?.tracker.close() },
        { name: 'compactor', run: () => journal?.compactor.stop() },
        { name: 'state', run: () => this.#setState('failed') },
        { name: 'settle', run: () => Promise.resolve() },
        { name: 'checkpoint', run: () => this.#parts.checkpoint.save() },
        this.#closeStore,
      ],
      this.#log,
    );
    this.#resolveDone();
  }

  readonly #closeStore: CleanupStep = {
    name: 'store',
    run: () => {
      if (this.#o.closeStore) this.#o.store.close();
    },
  };

  /** Background tasks never reject: a failure fails the bot. */
  #guard(task: Promise<void>): Promise<void> {
    return task.catch(async (err: unknown) => {
      const stopping = this.#intake.signal.aborted || this.#completionsAbort.signal.aborted;
      if (err instanceof AbortError && stopping) return;
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
}
