import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type CounterConfiguration,
} from 'prom-client';
import type { Clock } from '../../core/clock.js';
import {
  INTENT_STATES,
  TERMINAL_STATES,
  type IntentRecord,
  type IntentState,
  type Store,
} from '../../store/store.js';
import type { JournalQueries } from '../../store/journal-queries.js';
import { storeQueries } from '../../store/store-queries.js';
import type { Bot } from '../bot.js';
import type { IntentEvent } from '../submission-tracker.js';

export type OpsMetricsOptions = {
  readonly bot: Bot;
  readonly store: Store;
  /** The journal's counts; default: the store's own reads (`storeQueries`). */
  readonly queries?: JournalQueries;
  readonly clock: Clock;
  /** The latest ledger end known (cached by the caller), for the lag gauge. */
  readonly ledgerEnd: () => number | undefined;
  /** Also register prom-client's process metrics (default true). */
  readonly processMetrics?: boolean;
};

export type OpsMetrics = {
  readonly registry: Registry;
  /** Stops observing the bot's events. */
  close(): void;
};

/** prom-client's default gauges whose names end in `_total` (dropped: see below). */
export const NON_COUNTER_TOTALS = [
  'ledgerbot_nodejs_active_handles_total',
  'ledgerbot_nodejs_active_requests_total',
  'ledgerbot_nodejs_active_resources_total',
] as const;

/** Seconds; from well under the completion of a healthy submission to a long retry chain. */
const LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800];

/**
 * The bot's Prometheus metrics on a registry of its own. Counters and gauges are read at scrape
 * time from `bot.metrics` and the store, so there is one source of truth; only the latency
 * histograms observe the bot's intent events as they happen. Labels are rule ids, states and
 * stream names: never contract or command ids.
 */
export function createOpsMetrics(options: OpsMetricsOptions): OpsMetrics {
  const { bot, clock } = options;
  const queries = options.queries ?? storeQueries(options.store);
  const registry = new Registry();
  const m = (): ReturnType<Bot['metrics']['snapshot']> => bot.metrics.snapshot();

  const perRule = (
    name: string,
    help: string,
    value: (r: ReturnType<Bot['metrics']['snapshot']>['rules'][string]) => number,
  ): void => {
    counter({
      name,
      help,
      labelNames: ['rule'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [rule, r] of Object.entries(m().rules)) this.inc({ rule }, value(r));
      },
    });
  };
  perRule(
    'ledgerbot_rule_events_matched_total',
    'Events whose trigger the rule matched.',
    (r) => r.matched,
  );
  perRule(
    'ledgerbot_rule_conditions_false_total',
    'Matched events where a `when` condition was false.',
    (r) => r.conditionsFalse,
  );
  perRule('ledgerbot_rule_errors_total', 'Rule evaluation errors.', (r) => r.errors);
  perRule(
    'ledgerbot_intents_recorded_total',
    'Intents newly written to the journal.',
    (r) => r.recorded,
  );
  perRule(
    'ledgerbot_intent_retries_total',
    'Attempts scheduled again after a failure.',
    (r) => r.retries,
  );
  perRule(
    'ledgerbot_dead_letters_total',
    'Intents dead-lettered by this process.',
    (r) => r.transitions['dead-lettered'],
  );
  counter({
    name: 'ledgerbot_intents_total',
    help: 'Intents reaching each terminal state, by rule.',
    labelNames: ['rule', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [rule, r] of Object.entries(m().rules)) {
        for (const state of TERMINAL_STATES) this.inc({ rule, state }, r.transitions[state]);
      }
    },
  });
  /** A counter of one number of the bot's metrics. */
  const total = (name: string, help: string, value: () => number): void => {
    counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(value());
      },
    });
  };
  /** A counter with one label, whose values are the keys of one record of the bot's metrics. */
  const byLabel = <K extends string>(
    name: string,
    help: string,
    label: string,
    keys: readonly K[],
    values: () => Readonly<Record<K, number>>,
  ): void => {
    counter({
      name,
      help,
      labelNames: [label],
      registers: [registry],
      collect() {
        this.reset();
        const v = values();
        for (const key of keys) this.inc({ [label]: key }, v[key]);
      },
    });
  };
  total('ledgerbot_submissions_total', 'async/submit calls made.', () => m().submissions);
  byLabel(
    'ledgerbot_stream_reconnects_total',
    'Reconnects of the ledger streams.',
    'stream',
    ['updates', 'completions'],
    () => m().reconnects,
  );
  byLabel(
    'ledgerbot_rules_reloaded_total',
    'Hot reloads of the rule files: applied, or rejected (the old rules kept running).',
    'result',
    ['applied', 'rejected'],
    () => m().reloads,
  );
  total(
    'ledgerbot_earlier_commits_found_total',
    'Intents settled succeeded after a contention error: the transaction that archived their input carried their own commandId.',
    () => m().earlierCommitsFound,
  );
  total(
    'ledgerbot_shadow_intents_total',
    'Intents a shadow bot would have submitted.',
    () => m().shadowIntents,
  );

  const gauge = (name: string, help: string, value: () => number | undefined): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const v = value();
        if (v === undefined) this.reset();
        else this.set(v);
      },
    });
  };
  gauge('ledgerbot_up', '1 while the bot is running.', () => (bot.state === 'running' ? 1 : 0));
  gauge('ledgerbot_stream_lag_offsets', 'Ledger end minus the processed offset.', () => {
    const end = options.ledgerEnd();
    const processed = bot.processedOffset();
    return end === undefined || processed === undefined ? undefined : Math.max(0, end - processed);
  });
  gauge(
    'ledgerbot_stream_lag_seconds',
    'Seconds from the record time of the last transaction processed to its processing (it stays put while none arrives).',
    () => {
      const ms = m().streamLagMs;
      return ms === null ? undefined : ms / 1000;
    },
  );
  gauge('ledgerbot_stream_connected', '1 while a websocket of the updates stream is open.', () =>
    m().updatesConnected ? 1 : 0,
  );
  gauge(
    'ledgerbot_completions_stream_connected',
    '1 while a websocket of the completions stream is open.',
    () => (m().completionsConnected ? 1 : 0),
  );
  gauge('ledgerbot_in_flight', 'Intents being worked on.', () => m().inFlight);
  gauge(
    'ledgerbot_waiting_for_admission',
    'Intents waiting for a place (ingestion is paused meanwhile).',
    () => m().waitingForAdmission,
  );
  gauge('ledgerbot_checkpoint_offset', 'The stored checkpoint.', () => bot.checkpoint());
  gauge('ledgerbot_processed_offset', 'The last offset processed.', () => bot.processedOffset());
  // The journal's counts are a query (a shared store answers them from its database), so the
  // two gauges that show them collect asynchronously; prom-client awaits a collect's promise.
  // One scrape asks once: the gauges share the query that is under way.
  let counting: Promise<Record<IntentState, number> | undefined> | undefined;
  const counts = (): Promise<Record<IntentState, number> | undefined> => {
    counting ??= queries
      .countByState()
      .catch(() => undefined) // the store is closed
      .finally(() => (counting = undefined));
    return counting;
  };
  new Gauge({
    name: 'ledgerbot_dead_letter_depth',
    help: 'Dead letters in the store.',
    registers: [registry],
    async collect() {
      const v = (await counts())?.['dead-lettered'];
      if (v === undefined) this.reset();
      else this.set(v);
    },
  });
  new Gauge({
    name: 'ledgerbot_store_intents',
    help: 'Intents in the store per state (the size of the journal).',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const c = await counts();
      this.reset();
      if (c === undefined) return;
      for (const state of INTENT_STATES) this.set({ state }, c[state]);
    },
  });
  new Gauge({
    name: 'ledgerbot_rule_paused',
    help: '1 while the rule is paused (or resuming).',
    labelNames: ['rule'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of bot.ruleStatus()) {
        this.set({ rule: r.id }, r.state === 'paused' || r.state === 'resuming' ? 1 : 0);
      }
    },
  });

  const toSubmit = new Histogram({
    name: 'ledgerbot_event_to_submit_seconds',
    help: 'From the triggering event (its record time, or the schedule slot) to the first submission.',
    labelNames: ['rule'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const toCompletion = new Histogram({
    name: 'ledgerbot_event_to_completion_seconds',
    help: 'From the triggering event (its record time, or the schedule slot) to the terminal state.',
    labelNames: ['rule'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const onIntent = (e: IntentEvent): void => {
    const seconds = intentLatencySeconds(
      e.record,
      bot.metrics.eventTimeOf(e.commandId),
      clock.now(),
    );
    if (e.to === 'submitted' && e.record.attempts === 1) {
      toSubmit.observe({ rule: e.ruleId }, seconds);
    } else if (TERMINAL_STATES.has(e.to)) {
      toCompletion.observe({ rule: e.ruleId }, seconds);
    }
  };
  bot.events.on('intent', onIntent);

  if (options.processMetrics !== false) {
    collectDefaultMetrics({ register: registry, prefix: 'ledgerbot_' });
    // prom-client names these three gauges `…_total`, which Prometheus keeps for counters
    // (`promtool check metrics` fails on them). Each is the sum of the gauge of the same name
    // without `_total`, by type (`sum(ledgerbot_nodejs_active_handles)`), so nothing is lost.
    for (const name of NON_COUNTER_TOTALS) registry.removeSingleMetric(name);
  }
  return {
    registry,
    close: () => {
      bot.events.off('intent', onIntent);
    },
  };
}

/**
 * Seconds from what triggered an intent to `now`: the slot time of a schedule intent, else the
 * record time of its transaction (`eventTime`, when this process saw the event), else the time
 * the intent was recorded (an intent resumed from the journal after a restart). A start after
 * `now` (clock skew between the participant and this host) counts as 0.
 */
export function intentLatencySeconds(
  record: Pick<IntentRecord, 'trigger' | 'createdAt'>,
  eventTime: number | undefined,
  now: number,
): number {
  const start =
    record.trigger.kind === 'slot' ? record.trigger.slot : (eventTime ?? record.createdAt);
  return Math.max(0, now - start) / 1000;
}

function counter<T extends string>(config: CounterConfiguration<T>): Counter<T> {
  return new Counter(config);
}
