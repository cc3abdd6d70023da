import { AbortError } from '../core/abort-error.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Random } from '../core/random.js';
import type { CompiledRule, ScheduleTrigger } from '../rules/compiled-rule.js';
import type { SlotJournal, SlotRunResult } from './run-slot.js';
import type { SlotScheduler } from './slot-scheduler.js';
import { iterateSlots, nextSlots } from './slots-between.js';
import { slotsToRun } from './slots-to-run.js';

export type ScheduleDriverOptions = {
  /** All loaded rules; the driver takes the enabled schedule rules. */
  readonly rules: readonly CompiledRule[];
  readonly scheduler: SlotScheduler;
  /** Runs one slot (normally `runSlot` with the runtime's source, sink and store). */
  readonly runSlot: (
    rule: CompiledRule,
    slot: number,
    signal: AbortSignal,
  ) => Promise<SlotRunResult>;
  /** The store's slot records: the last completed slot and an interrupted one, per rule. */
  readonly journal: Pick<SlotJournal, 'getSlotRecord'>;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  /** See `slotsToRun` (default 60 s). */
  readonly onTimeMs?: number;
  /** After a failed slot, try again this much later (default 30 s). */
  readonly retryDelayMs?: number;
  /**
   * Whether the rule is paused (asked at every wake and before every slot): a paused rule fires
   * no slot. Call `resumed` when it may fire again. Default: never paused.
   */
  readonly paused?: (ruleId: string) => boolean;
};

/** Counters per rule, for metrics and `ledgerbot schedule`. */
export type ScheduleRuleStats = {
  readonly ruleId: string;
  readonly slotsRun: number;
  readonly slotsFailed: number;
  /** Slots that came due while the rule's previous slot was still running. */
  readonly skippedOverlap: number;
  /** Missed slots the misfire policy (`catchUp`) left out. */
  readonly skippedMisfire: number;
  readonly lastSlot?: number;
  readonly running: boolean;
};

type RuleState = {
  readonly rule: CompiledRule;
  readonly trigger: ScheduleTrigger;
  watch?: { stop(): void };
  running: Promise<void> | null;
  /** Slots at or before this were run, skipped or are being run by this driver. */
  upTo: number | undefined;
  /** The first slot after `upTo`: wakes before it are no-ops. */
  nextDue: number | undefined;
  /** Set by start and after a failure: the next wake runs a full cycle whatever `nextDue` says. */
  force: boolean;
  retry: TimerHandle | undefined;
  stats: {
    slotsRun: number;
    slotsFailed: number;
    skippedOverlap: number;
    skippedMisfire: number;
    lastSlot?: number;
  };
};

/**
 * Runs schedule rules: on every wake of the scheduler it asks the pure slot functions what is
 * due, and runs those slots one after another, per rule.
 *
 * - Start: a slot left in progress by a crash runs again first (with its recorded snapshot
 *   offset), then the slots missed since the last completed one are handled by the rule's
 *   misfire policy. A rule that never completed a slot has missed nothing.
 * - A slot never overlaps the previous slot of the same rule: a slot that comes due while the
 *   previous one still runs is skipped, counted and logged (and not caught up later).
 * - `jitter` delays each slot by a random time below it (injected Random).
 * - A failed slot is logged and counted; the driver tries again after `retryDelayMs`, under the
 *   misfire policy, and the store keeps an interrupted slot in progress for the next start.
 * - A paused rule (`paused`) fires no slot: a slot that comes due, or whose jitter ends, while
 *   it is paused does not run, and a slot already running finishes. At `resumed` the slots
 *   missed meanwhile are handled by the misfire policy, as after downtime.
 *
 * Lifecycle: the constructor does nothing; `start()` watches; `stop()` is idempotent, stops
 * watching, aborts running slots and waits for them.
 */
export class ScheduleDriver {
  readonly #options: ScheduleDriverOptions;
  readonly #states: RuleState[];
  readonly #abort = new AbortController();
  #startedAt = 0;
  #state: 'created' | 'started' | 'stopped' = 'created';

  constructor(options: ScheduleDriverOptions) {
    this.#options = options;
    this.#states = options.rules.flatMap((rule) =>
      rule.enabled && rule.trigger.kind === 'schedule'
        ? [
            {
              rule,
              trigger: rule.trigger,
              running: null,
              upTo: undefined,
              nextDue: undefined,
              force: true,
              retry: undefined,
              stats: { slotsRun: 0, slotsFailed: 0, skippedOverlap: 0, skippedMisfire: 0 },
            },
          ]
        : [],
    );
  }

  /** The schedule rules being driven, with their counters. */
  stats(): ScheduleRuleStats[] {
    return this.#states.map((s) => ({
      ruleId: s.rule.id,
      ...s.stats,
      running: s.running !== null,
    }));
  }

  start(): void {
    if (this.#state !== 'created') return;
    this.#state = 'started';
    this.#startedAt = this.#options.clock.now();
    this.#options.logger.info({ rules: this.#states.length }, 'schedule driver started');
    for (const state of this.#states) {
      state.watch = this.#options.scheduler.watch(state.trigger, () => this.#wake(state));
      this.#wake(state);
    }
  }

  async stop(): Promise<void> {
    if (this.#state === 'stopped') return;
    this.#state = 'stopped';
    for (const state of this.#states) {
      state.watch?.stop();
      if (state.retry !== undefined) this.#options.clock.clearTimeout(state.retry);
    }
    this.#abort.abort();
    await Promise.all(this.#states.flatMap((s) => (s.running === null ? [] : [s.running])));
    this.#options.logger.info({}, 'schedule driver stopped');
  }

  /** Waits until no slot is running (for tests and the CLI). */
  async idle(): Promise<void> {
    for (let i = 0; i < 1000; i++) {
      const running = this.#states.map((s) => s.running).filter((r) => r !== null);
      if (running.length === 0) return;
      await Promise.all(running);
    }
  }

  /**
   * The rule is no longer paused: its slots missed while it was (since its last completed or
   * passed-over slot) are handled by the misfire policy now, as after downtime.
   */
  resumed(ruleId: string): void {
    const state = this.#states.find((s) => s.rule.id === ruleId);
    if (state === undefined) return;
    state.force = true;
    this.#wake(state);
  }

  #paused(state: RuleState): boolean {
    return this.#options.paused?.(state.rule.id) === true;
  }

  #wake(state: RuleState): void {
    if (this.#state !== 'started') return;
    // Nothing moves while paused: the slots that come due now are missed, not passed over.
    if (this.#paused(state)) {
      state.force = true;
      return;
    }
    const now = this.#options.clock.now();
    if (state.running !== null) {
      if (state.nextDue !== undefined && now >= state.nextDue) this.#skipOverlap(state, now);
      return;
    }
    if (!state.force && state.nextDue !== undefined && now < state.nextDue) return;
    state.force = false;
    state.running = this.#cycle(state).finally(() => {
      state.running = null;
    });
  }

  #skipOverlap(state: RuleState, now: number): void {
    const { cronSpec, timezone } = state.trigger;
    let skipped = 0;
    let latest: number | undefined;
    for (const slot of iterateSlots(cronSpec, timezone, state.upTo ?? this.#startedAt, now)) {
      skipped++;
      latest = slot;
    }
    if (latest === undefined) return;
    state.stats.skippedOverlap += skipped;
    state.upTo = latest;
    state.nextDue = nextSlots(cronSpec, timezone, latest, 1)[0];
    this.#options.logger.warn(
      { ruleId: state.rule.id, slot: iso(latest), skipped },
      'schedule slot skipped: the previous slot of the rule is still running',
    );
  }

  async #cycle(state: RuleState): Promise<void> {
    const { clock, journal, logger } = this.#options;
    const ruleId = state.rule.id;
    const record = journal.getSlotRecord(ruleId);
    if (record?.inProgressSlot !== undefined) {
      logger.info({ ruleId, slot: iso(record.inProgressSlot) }, 'resuming an interrupted slot');
      if (!(await this.#run(state, record.inProgressSlot, false))) return;
    }
    const completed = journal.getSlotRecord(ruleId)?.lastCompletedSlot;
    const after = Math.max(completed ?? this.#startedAt, state.upTo ?? Number.NEGATIVE_INFINITY);
    const plan = slotsToRun({
      trigger: state.trigger,
      after,
      now: clock.now(),
      ...(this.#options.onTimeMs === undefined ? {} : { onTimeMs: this.#options.onTimeMs }),
    });
    if (plan.skipped > 0) {
      state.stats.skippedMisfire += plan.skipped;
      logger.info(
        {
          ruleId,
          skipped: plan.skipped,
          catchUp: state.trigger.catchUp,
          since: iso(after),
          running: plan.run.length,
        },
        'missed schedule slots left out by the catch-up policy',
      );
    }
    state.upTo = plan.upTo ?? after;
    for (const slot of plan.run) {
      if (!(await this.#run(state, slot, true))) return;
    }
    state.nextDue = nextSlots(state.trigger.cronSpec, state.trigger.timezone, state.upTo, 1)[0];
  }

  /** Runs one slot; false if it failed (a retry is then armed) or the rule is paused. */
  async #run(state: RuleState, slot: number, jitter: boolean): Promise<boolean> {
    const { clock, logger, random } = this.#options;
    const signal = this.#abort.signal;
    const ruleId = state.rule.id;
    try {
      const jitterMs = state.trigger.jitterMs;
      if (jitter && jitterMs > 0) await clock.sleep(Math.floor(random.next() * jitterMs), signal);
      if (this.#paused(state)) {
        // Left for `resumed`, which hands it to the misfire policy with the others missed.
        unpassSlot(state, slot);
        state.force = true;
        logger.info({ ruleId, slot: iso(slot) }, 'schedule slot not run: the rule is paused');
        return false;
      }
      const started = clock.now();
      const result = await this.#options.runSlot(state.rule, slot, signal);
      state.stats.slotsRun++;
      state.stats.lastSlot = slot;
      logger.info(
        {
          ruleId,
          slot: iso(slot),
          offset: result.snapshotOffset,
          resumed: result.resumed,
          contracts: result.contracts,
          intents: result.intents,
          errors: result.errorCount,
          durationMs: clock.now() - started,
        },
        'schedule slot done',
      );
      for (const error of result.errors) {
        logger.warn({ ruleId, slot: iso(slot), error }, 'rule failed on a contract of the slot');
      }
      return true;
    } catch (error) {
      if (error instanceof AbortError || signal.aborted) return false;
      state.stats.slotsFailed++;
      // Consider the slot again on the retry (under the misfire policy).
      unpassSlot(state, slot);
      logger.error({ ruleId, slot: iso(slot), err: error }, 'schedule slot failed');
      state.force = true;
      state.retry = clock.setTimeout(() => {
        state.retry = undefined;
        this.#wake(state);
      }, this.#options.retryDelayMs ?? 30_000);
      return false;
    }
  }
}

/** The driver has not passed `slot` and those after it: a later cycle considers them again. */
function unpassSlot(state: RuleState, slot: number): void {
  if (state.upTo !== undefined && state.upTo >= slot) state.upTo = slot - 1;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
