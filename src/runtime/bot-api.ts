import type { EventEmitter } from 'node:events';
import type { RuleSet } from '../rules/compiled-rule.js';
import type { Intent } from '../rules/evaluation-result.js';
import type { SlotSubmitContext } from '../schedule/run-slot.js';
import type { ScheduleDriver } from '../schedule/schedule-driver.js';
import type { IntentRecord } from '../store/store.js';
import type { BotEventMap, BotState } from './bot-events.js';
import type { BotMetrics } from './bot-metrics.js';
import type { IntentSummary } from './recent-intents.js';
import type { RuleStatus } from './rule-book.js';
import type { RuleSetDiff } from './rule-set-diff.js';
import type { SubscriptionPlan } from './subscription-plan.js';

/** A trigger bot (`createBot`): its lifecycle, state, rule control and dead-letter retries. */
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
