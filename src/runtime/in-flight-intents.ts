import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { IntentChange, IntentRecord, IntentState, Store } from '../store/store.js';
import type { BotMetrics } from './bot-metrics.js';
import { errorFields, type ErrorRecord } from './error-record.js';
import { intentFields, logIntent } from './intent-log.js';
import { isBusy, type TrackedIntent } from './tracked-intent.js';

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

export type InFlightIntentsOptions = {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: BotMetrics;
  readonly onIntent?: ((event: IntentEvent) => void) | undefined;
};

/**
 * The submission tracker's bookkeeping: the intents in flight, each state change journalled
 * first and then logged, counted and emitted, the permit released when an intent leaves, and
 * the waiters of `drain` woken once nothing is outstanding.
 */
export class InFlightIntents {
  readonly #o: InFlightIntentsOptions;
  readonly #tracked = new Map<string, TrackedIntent>();
  #idleWaiters: (() => void)[] = [];

  constructor(options: InFlightIntentsOptions) {
    this.#o = options;
  }

  get size(): number {
    return this.#tracked.size;
  }

  has(commandId: string): boolean {
    return this.#tracked.has(commandId);
  }

  get(commandId: string): TrackedIntent | undefined {
    return this.#tracked.get(commandId);
  }

  values(): IterableIterator<TrackedIntent> {
    return this.#tracked.values();
  }

  /** The intents with a submission or a lookup outstanding. */
  get busy(): number {
    let n = 0;
    for (const t of this.#tracked.values()) if (isBusy(t.phase)) n++;
    return n;
  }

  add(t: TrackedIntent): void {
    this.#tracked.set(t.commandId, t);
    this.#o.metrics.inFlight = this.#tracked.size;
  }

  /** Journal first, then log and emit. False when the store refused (the intent is dropped). */
  transition(t: TrackedIntent, change: IntentChange): boolean {
    const from = t.record.state;
    try {
      // A transition leaves the payload as it was: keep the one checked when tracking began.
      t.record = { ...this.#o.store.transition(t.commandId, change), payload: t.record.payload };
    } catch (err) {
      this.dropUnrecorded(t, change.to, err);
      return false;
    }
    const error = 'error' in change ? (change.error as ErrorRecord | undefined) : undefined;
    const now = this.#o.clock.now();
    // Only this run's first attempt of the intent is known (`attempts` counts every run's).
    if (change.to === 'submitted' && t.record.attempts === 1) t.firstSubmitAt = now;
    logIntent(this.#o.logger, t.record, from, error, { firstSubmitAt: t.firstSubmitAt, now });
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

  /** The terminal change: recorded, and the intent leaves with its permit. */
  settle(t: TrackedIntent, change: IntentChange): void {
    this.clearTimer(t);
    t.seq += 1;
    this.transition(t, change);
    this.#remove(t);
  }

  /** The journal refused a change: the intent is left to the next start, which reads the journal. */
  dropUnrecorded(t: TrackedIntent, state: IntentState, err: unknown): void {
    this.#o.logger.error(
      { ...intentFields(t.record), state, ...errorFields(err) },
      'cannot record intent state change; leaving it to the next start',
    );
    this.clearTimer(t);
    t.seq += 1;
    this.#remove(t);
  }

  clearTimer(t: TrackedIntent): void {
    if (t.timer !== undefined) this.#o.clock.clearTimeout(t.timer);
    t.timer = undefined;
  }

  /** Forgets every intent, releasing its permit; outstanding continuations see a new seq. */
  clear(): void {
    for (const t of this.#tracked.values()) {
      this.clearTimer(t);
      t.seq += 1;
      t.permit.release();
    }
    this.#tracked.clear();
    this.#o.metrics.inFlight = 0;
    this.notifyIdle();
  }

  /** Resolves once nothing is busy, or after `graceMs`. */
  async whenIdle(graceMs: number): Promise<void> {
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

  /** Wakes `whenIdle` waiters if nothing is busy any more; call after any phase change. */
  notifyIdle(): void {
    if (this.busy > 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }

  #remove(t: TrackedIntent): void {
    if (this.#tracked.delete(t.commandId)) t.permit.release();
    this.#o.metrics.inFlight = this.#tracked.size;
    this.notifyIdle();
  }
}
