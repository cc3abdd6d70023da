import { INTENT_STATES, type IntentState } from '../store/store.js';

/** A point-in-time copy of the counters and gauges, for the ops endpoint and tests. */
export type BotMetricsSnapshot = {
  /** Transactions read from the updates stream. */
  readonly transactionsSeen: number;
  /** Events inside them (created, archived, exercised). */
  readonly eventsSeen: number;
  /** Intents newly written to the journal. */
  readonly intentsRecorded: number;
  /** State changes into each state, made by this process. */
  readonly intentTransitions: Readonly<Record<IntentState, number>>;
  readonly ruleErrors: number;
  readonly ruleErrorsByRule: Readonly<Record<string, number>>;
  /** `async/submit` calls made. */
  readonly submissions: number;
  /** Completions read (all of them, also those of other processes' commands). */
  readonly completionsSeen: number;
  /** Gauge: intents being worked on (submitted, awaiting a completion, or backing off). */
  readonly inFlight: number;
  /** Gauge: intents recorded but waiting for a place (ingestion is paused meanwhile). */
  readonly waitingForAdmission: number;
  /** Gauge: ms between the record time of the last transaction and its processing. */
  readonly streamLagMs: number | null;
  /** The offset of the last element processed from the updates stream. */
  readonly lastOffset: number | null;
  readonly reconnects: { readonly updates: number; readonly completions: number };
  /** Times the bot skipped pruned offsets and restarted from the ledger end. */
  readonly prunedRestarts: number;
  /** Gauge: the updates stream is connected (no reconnect pending since the last element). */
  readonly updatesConnected: boolean;
  /** Intents a shadow bot would have submitted. */
  readonly shadowIntents: number;
  /** Hot reloads applied, and rejected (an invalid rule file: the old rules kept running). */
  readonly reloads: { readonly applied: number; readonly rejected: number };
  /** Per rule id (rules seen by this process only). */
  readonly rules: Readonly<Record<string, RuleCounters>>;
};

/** Counters of one rule. */
export type RuleCounters = {
  /** Events whose trigger the rule matched. */
  readonly matched: number;
  /** Matched events where a `when` condition was false. */
  readonly conditionsFalse: number;
  readonly errors: number;
  /** Intents newly written to the journal. */
  readonly recorded: number;
  /** State changes into each state, made by this process. */
  readonly transitions: Readonly<Record<IntentState, number>>;
  /** Attempts scheduled again after a failure (`→ pending` of an intent already tried). */
  readonly retries: number;
};

type MutableRuleCounters = {
  -readonly [K in keyof RuleCounters]: K extends 'transitions'
    ? Record<IntentState, number>
    : RuleCounters[K];
};

/**
 * In-process counters and gauges; the ops layer turns them into Prometheus metrics. Plain
 * mutable fields, written by the runtime only.
 */
export class BotMetrics {
  transactionsSeen = 0;
  eventsSeen = 0;
  intentsRecorded = 0;
  readonly intentTransitions: Record<IntentState, number> = Object.fromEntries(
    INTENT_STATES.map((s) => [s, 0]),
  ) as Record<IntentState, number>;
  ruleErrors = 0;
  readonly ruleErrorsByRule: Record<string, number> = {};
  submissions = 0;
  completionsSeen = 0;
  inFlight = 0;
  waitingForAdmission = 0;
  streamLagMs: number | null = null;
  lastOffset: number | null = null;
  readonly reconnects = { updates: 0, completions: 0 };
  prunedRestarts = 0;
  updatesConnected = false;
  shadowIntents = 0;
  readonly reloads = { applied: 0, rejected: 0 };
  readonly #rules = new Map<string, MutableRuleCounters>();

  /**
   * Counts a state change. With `ruleId` (every caller has one) it also counts per rule, and a
   * `→ pending` from a state other than none (`from !== null`) counts as a retry.
   */
  countTransition(state: IntentState, ruleId?: string, from?: IntentState | null): void {
    this.intentTransitions[state] += 1;
    if (ruleId === undefined) return;
    const r = this.#rule(ruleId);
    r.transitions[state] += 1;
    if (state === 'pending' && from !== undefined && from !== null) r.retries += 1;
  }

  countRuleError(ruleId: string): void {
    this.ruleErrors += 1;
    this.ruleErrorsByRule[ruleId] = (this.ruleErrorsByRule[ruleId] ?? 0) + 1;
    this.#rule(ruleId).errors += 1;
  }

  /** One rule's trigger matched an event; `conditionFalse`: a `when` condition was false. */
  countMatch(ruleId: string, conditionFalse: boolean): void {
    const r = this.#rule(ruleId);
    r.matched += 1;
    if (conditionFalse) r.conditionsFalse += 1;
  }

  countRecorded(ruleId: string): void {
    this.intentsRecorded += 1;
    this.#rule(ruleId).recorded += 1;
  }

  #rule(ruleId: string): MutableRuleCounters {
    let r = this.#rules.get(ruleId);
    if (r === undefined) {
      r = {
        matched: 0,
        conditionsFalse: 0,
        errors: 0,
        recorded: 0,
        transitions: Object.fromEntries(INTENT_STATES.map((s) => [s, 0])) as Record<
          IntentState,
          number
        >,
        retries: 0,
      };
      this.#rules.set(ruleId, r);
    }
    return r;
  }

  snapshot(): BotMetricsSnapshot {
    return {
      transactionsSeen: this.transactionsSeen,
      eventsSeen: this.eventsSeen,
      intentsRecorded: this.intentsRecorded,
      intentTransitions: { ...this.intentTransitions },
      ruleErrors: this.ruleErrors,
      ruleErrorsByRule: { ...this.ruleErrorsByRule },
      submissions: this.submissions,
      completionsSeen: this.completionsSeen,
      inFlight: this.inFlight,
      waitingForAdmission: this.waitingForAdmission,
      streamLagMs: this.streamLagMs,
      lastOffset: this.lastOffset,
      reconnects: { ...this.reconnects },
      prunedRestarts: this.prunedRestarts,
      updatesConnected: this.updatesConnected,
      shadowIntents: this.shadowIntents,
      reloads: { ...this.reloads },
      rules: Object.fromEntries(
        [...this.#rules].map(([id, r]) => [id, { ...r, transitions: { ...r.transitions } }]),
      ),
    };
  }
}
