import type { JsTransaction } from '../ledger/wire/wire-types.js';
import { evaluateTransaction } from '../rules/evaluate.js';
import type { Intent, RuleEvaluationError } from '../rules/evaluation-result.js';
import type { RuleIndex } from '../rules/rule-index.js';
import type { BotMetrics } from './bot-metrics.js';

/** One transaction evaluated into intents: what the pipeline records and admits. */
export type UpdateEvaluation = {
  readonly transaction: JsTransaction;
  /** The offset of the stream element (a recovered contract's creation offset). */
  readonly offset: number;
  /** The record time, epoch ms; NaN when unreadable. */
  readonly recordMs: number;
  readonly intents: readonly Intent[];
  readonly errors: readonly RuleEvaluationError[];
  /** Rules whose trigger matched the transaction's events (counted per event and rule). */
  readonly matched: number;
};

export type EvaluateUpdateContext = {
  readonly index: RuleIndex;
  readonly parties: Readonly<Record<string, string>>;
  /** Matches the package-id interface ids of events to `#name` rules (BotOptions.packageNameOf). */
  readonly packageNameOf?: (packageId: string) => string | undefined;
  /** The bot's time, epoch ms: CEL `now` when the record time is unreadable, and the stream lag. */
  readonly now: number;
  readonly metrics: BotMetrics;
  /**
   * An element of the live updates stream: counted (transactions, events) and its lag measured.
   * False for the replay of a resumed rule and for a pruning recovery.
   */
  readonly live: boolean;
  /** Changes the intents before they are recorded: a pruning recovery rekeys them. */
  readonly rekey?: (intents: readonly Intent[], transaction: JsTransaction) => Intent[];
};

/**
 * Evaluates one transaction with the rule index: CEL `now` is the record time, so every replica
 * and every replay sees the same value. Counts the matches and rule errors in `metrics` (the
 * caller reports the errors). No I/O.
 */
export function evaluateUpdate(
  transaction: JsTransaction,
  offset: number,
  context: EvaluateUpdateContext,
): UpdateEvaluation {
  const { metrics } = context;
  if (context.live) {
    metrics.transactionsSeen += 1;
    metrics.eventsSeen += transaction.events.length;
  }
  const recordMs = Date.parse(transaction.recordTime);
  const readable = Number.isFinite(recordMs);
  if (context.live && readable) metrics.streamLagMs = Math.max(0, context.now - recordMs);
  const matchCounts = metrics.matchCountsFor(context.index);
  const before = matchCounts.total;
  const result = evaluateTransaction(
    context.index,
    transaction,
    { parties: context.parties, now: new Date(readable ? recordMs : context.now) },
    context.packageNameOf === undefined
      ? { matchCounts }
      : { matchCounts, packageNameOf: context.packageNameOf },
  );
  const matched = matchCounts.total - before;
  for (const e of result.errors) metrics.countRuleError(e.ruleId);
  const intents =
    context.rekey === undefined ? result.intents : context.rekey(result.intents, transaction);
  return { transaction, offset, recordMs, intents, errors: result.errors, matched };
}
