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

  countTransition(state: IntentState): void {
    this.intentTransitions[state] += 1;
  }

  countRuleError(ruleId: string): void {
    this.ruleErrors += 1;
    this.ruleErrorsByRule[ruleId] = (this.ruleErrorsByRule[ruleId] ?? 0) + 1;
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
    };
  }
}
