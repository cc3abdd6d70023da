import { isAuthRejection, isTokenRejected } from '../ledger/error-checks.js';
import { settleMatchCounts, type MatchCounts } from '../rules/evaluate.js';
import type { RuleIndex } from '../rules/rule-index.js';
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
  /** Finished intents deleted from the journal by compaction (state.retention). */
  readonly compactedIntents: number;
  /**
   * Intents settled `succeeded` after a contention error because the transaction that archived
   * their input carried their own commandId (an earlier attempt, run or replica committed).
   */
  readonly earlierCommitsFound: number;
  /** Gauge: a websocket of the updates stream is open (traffic or not). */
  readonly updatesConnected: boolean;
  /** Gauge: a websocket of the completions stream is open. */
  readonly completionsConnected: boolean;
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

export type StreamName = 'updates' | 'completions';

/** Far above any in-flight bound; only intents that never turn terminal here could pile up. */
const MAX_EVENT_TIMES = 100_000;

/**
 * Rule indexes whose match counts are kept apart (the live one, a resumed rule's replay, the
 * ones before a few reloads); the oldest is folded into the per-rule counters past it.
 */
const MAX_MATCH_COUNTS = 8;

/** The match counts of one rule index, with the rule id at each position. */
type IndexMatchCounts = MatchCounts & { readonly ids: readonly string[] };

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
  compactedIntents = 0;
  earlierCommitsFound = 0;
  shadowIntents = 0;
  readonly reloads = { applied: 0, rejected: 0 };
  readonly #rules = new Map<string, MutableRuleCounters>();
  /** Per rule index, the match counts evaluate keeps in place (matchCountsFor). */
  readonly #matchCounts = new WeakMap<RuleIndex, IndexMatchCounts>();
  /** The same counts, oldest first, not yet folded into #rules. */
  readonly #openMatchCounts: IndexMatchCounts[] = [];
  /**
   * Open websockets per stream. A count, not a flag: after a resubscription the old socket's
   * close may come after the new one's open.
   */
  readonly #openSockets: Record<StreamName, number> = { updates: 0, completions: 0 };
  readonly #streamProblems: Record<StreamName, string | undefined> = {
    updates: undefined,
    completions: undefined,
  };
  readonly #eventTimes = new Map<string, number>();

  get updatesConnected(): boolean {
    return this.#openSockets.updates > 0;
  }

  /** Why the updates stream last failed, since its last open; undefined when it did not. */
  get updatesProblem(): string | undefined {
    return this.#streamProblems.updates;
  }

  /**
   * A failure of `stream` (a reconnect, or an auth failure the bot backs off from), said for
   * `/readyz`: a refused token as such, with where to look; anything else by its message.
   */
  streamFailed(stream: StreamName, error: unknown): void {
    this.#streamProblems[stream] = isTokenRejected(error)
      ? "the participant rejected the bot's token: check ledger.auth (the token, its audience, its expiry)"
      : isAuthRejection(error)
        ? "the participant denied the bot's user the rights it needs: check the user's rights (actAs, readAs)"
        : error instanceof Error
          ? error.message
          : String(error);
  }

  get completionsConnected(): boolean {
    return this.#openSockets.completions > 0;
  }

  /** A websocket of `stream` opened (StreamOptions.onOpen). */
  streamOpened(stream: StreamName): void {
    this.#openSockets[stream] += 1;
    this.#streamProblems[stream] = undefined;
  }

  /** A websocket of `stream` that had opened closed (StreamOptions.onClose). */
  streamClosed(stream: StreamName): void {
    this.#openSockets[stream] = Math.max(0, this.#openSockets[stream] - 1);
  }

  /**
   * Remembers when the ledger event behind an intent happened (its transaction's record time),
   * for the latency histograms. Bounded: the oldest entries go first past MAX_EVENT_TIMES.
   */
  noteEventTime(commandId: string, epochMs: number): void {
    if (!Number.isFinite(epochMs)) return;
    this.#eventTimes.delete(commandId);
    this.#eventTimes.set(commandId, epochMs);
    if (this.#eventTimes.size > MAX_EVENT_TIMES) {
      const oldest = this.#eventTimes.keys().next().value;
      if (oldest !== undefined) this.#eventTimes.delete(oldest);
    }
  }

  /** The event time noted for an intent, if this process saw its event. */
  eventTimeOf(commandId: string): number | undefined {
    return this.#eventTimes.get(commandId);
  }

  /** The intent is terminal: its event time is not needed any more. */
  forgetEventTime(commandId: string): void {
    this.#eventTimes.delete(commandId);
  }

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

  /**
   * The counters evaluate increments for the rules of `index` (by their position: no lookup by
   * rule id per matched rule, the bot's hot path). They read as countMatch calls would: a rule's
   * counters are made when it first matches, and the snapshot adds the counts to them.
   */
  matchCountsFor(index: RuleIndex): MatchCounts {
    const known = this.#matchCounts.get(index);
    if (known !== undefined && this.#openMatchCounts.includes(known)) return known;
    if (this.#openMatchCounts.length >= MAX_MATCH_COUNTS)
      this.#fold(this.#openMatchCounts.shift()!);
    const ids = index.rules.map((r) => r.rule.id);
    const counts: IndexMatchCounts = {
      ids,
      matched: new Float64Array(ids.length),
      conditionsFalse: new Float64Array(ids.length),
      total: 0,
      first: (position) => void this.#rule(ids[position]!),
    };
    this.#matchCounts.set(index, counts);
    this.#openMatchCounts.push(counts);
    return counts;
  }

  #fold(counts: IndexMatchCounts): void {
    settleMatchCounts(counts);
    counts.ids.forEach((id, i) => {
      if (counts.matched[i] === 0) return;
      const r = this.#rule(id);
      r.matched += counts.matched[i]!;
      r.conditionsFalse += counts.conditionsFalse[i]!;
    });
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

  #rulesSnapshot(): Record<string, RuleCounters> {
    const copies = new Map(
      [...this.#rules].map(([id, r]) => [id, { ...r, transitions: { ...r.transitions } }]),
    );
    for (const counts of this.#openMatchCounts) {
      settleMatchCounts(counts);
      counts.ids.forEach((id, i) => {
        if (counts.matched[i] === 0) return;
        // Made when the rule first matched (MatchCounts.first).
        const r = copies.get(id)!;
        r.matched += counts.matched[i]!;
        r.conditionsFalse += counts.conditionsFalse[i]!;
      });
    }
    return Object.fromEntries(copies);
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
      compactedIntents: this.compactedIntents,
      earlierCommitsFound: this.earlierCommitsFound,
      updatesConnected: this.updatesConnected,
      completionsConnected: this.completionsConnected,
      shadowIntents: this.shadowIntents,
      reloads: { ...this.reloads },
      rules: this.#rulesSnapshot(),
    };
  }
}
