import type { Logger } from '../core/logger.js';
import type { TriggerKey } from '../core/trigger-key.js';
import { earliestOffsetOf } from '../ledger/error-checks.js';
import type { CreatedEvent, EventFormat, JsTransaction } from '../ledger/wire/wire-types.js';
import { commandIdFor } from '../rules/command-id.js';
import type { CompiledRule, RuleSet } from '../rules/compiled-rule.js';
import type { Intent } from '../rules/evaluation-result.js';
import type { RuleIndex } from '../rules/rule-index.js';
import type { Store } from '../store/store.js';
import type { BotLedger } from './bot-ledger.js';
import type { BotMetrics } from './bot-metrics.js';
import type { Checkpoint } from './checkpoint.js';
import { errorFields } from './error-record.js';
import { prunedUpTo } from './pruned-up-to.js';
import { retryOnClock, type RetryTiming } from './retry-on-clock.js';
import { RuntimeError } from './runtime-error.js';
import { planSubscription } from './subscription-plan.js';
import type { TransactionIngest } from './transaction-ingest.js';

/**
 * What a recovery from the active contract set can make up for after the participant pruned
 * updates the bot had not read yet:
 * - `created` rules: a contract created in the pruned range and still active at the pruning
 *   offset is in the active contract set there, with its creation offset and node id, so the
 *   rule can fire on it as on the live event;
 * - `exercised` and `archived` rules: nothing; exercises and archives leave no trace in an
 *   active contract set. Nor does a contract created and archived inside the pruned range.
 */
export type PruneRecoveryPlan = {
  /** The filter for the `created` rules' templates and parties; null without such rules. */
  readonly eventFormat: EventFormat | null;
  /** Ids of the enabled `exercised` and `archived` rules, whose pruned events are lost. */
  readonly lostRules: readonly string[];
};

export function pruneRecoveryPlan(
  rules: RuleSet,
  parties: Readonly<Record<string, string>>,
): PruneRecoveryPlan {
  const enabled = rules.rules.filter((r) => r.enabled);
  const created = enabled.filter((r) => r.trigger.kind === 'created');
  const lostRules = enabled
    .filter((r) => r.trigger.kind === 'exercised' || r.trigger.kind === 'archived')
    .map((r) => r.id);
  const format = planSubscription({ rules: created, warnings: [] }, parties).updateFormat;
  return { eventFormat: format?.includeTransactions?.eventFormat ?? null, lostRules };
}

/**
 * The contracts active at `at` (the pruning offset) that were created after `after` (the last
 * offset the bot evaluated): the creations in the pruned range that the bot never saw. Streamed,
 * so memory holds one page (or the socket's buffer), whatever the size of the range.
 */
export async function* gapContracts(
  ledger: Pick<BotLedger, 'activeContracts'>,
  request: { readonly at: number; readonly after: number; readonly eventFormat: EventFormat },
  signal: AbortSignal,
): AsyncGenerator<{ readonly created: CreatedEvent; readonly synchronizerId: string }> {
  const stream = ledger.activeContracts(
    { activeAtOffset: request.at, eventFormat: request.eventFormat },
    { signal },
  );
  for await (const element of stream) {
    const entry = element.contractEntry;
    // Incomplete (re)assignments are contracts moving between synchronizers, not creations.
    if (entry === undefined || !('JsActiveContract' in entry)) continue;
    const active = entry.JsActiveContract;
    if (active.createdEvent.offset <= request.after) continue;
    yield { created: active.createdEvent, synchronizerId: active.synchronizerId };
  }
}

/**
 * A contract of the active contract set as the one-event transaction its creation was, as far
 * as the active contract set tells: the creating update itself is pruned, so `updateId` is
 * empty, and the record time is the creation's ledger time (`createdAt`), which every replica
 * reads alike. Rules see the same `event` fields as live, except `updateId` and `workflowId`.
 */
function recoveredTransaction(created: CreatedEvent, synchronizerId: string): JsTransaction {
  return {
    updateId: '',
    commandId: '',
    workflowId: '',
    effectiveAt: created.createdAt,
    events: [{ CreatedEvent: created }],
    offset: created.offset,
    synchronizerId,
    recordTime: created.createdAt,
  };
}

/** One pruning recovery: where it read the active contract set, and counts for its log line. */
export type RecoveryCounts = {
  /** The pruning offset: the snapshot read, and the recovered intents' justifying offset. */
  readonly at: number;
  /** Contracts of the active contract set created in the pruned range. */
  contracts: number;
  /** Intents recorded for them. */
  intents: number;
  /** Intents left out because the journal already had them (or their live-key twin). */
  known: number;
};

/**
 * The intents of a contract recovered from the active contract set, keyed by its contract id
 * (its creating update is pruned, so the live key cannot be rebuilt) and justified by the read
 * of the active contract set at the pruning offset, where their dedup period is anchored (the
 * creation offset is pruned: the participant would refuse it). A rule whose intent for this
 * creation is already in the journal under the live key (`known`) is left out: an earlier run
 * saw the creation on the stream, and that intent resumes from the journal. One recovered
 * before has the same commandId, so `recordIntents` finds it.
 */
export function rekeyRecovered(
  intents: readonly Intent[],
  tx: JsTransaction,
  counts: RecoveryCounts,
  known: (ruleId: string, offset: number, nodeId: number) => boolean,
): Intent[] {
  const first = tx.events[0];
  if (first === undefined || !('CreatedEvent' in first)) return [];
  const created = first.CreatedEvent;
  const triggerKey: TriggerKey = {
    kind: 'contract',
    contractId: created.contractId,
    nodeId: created.nodeId,
  };
  const out: Intent[] = [];
  for (const intent of intents) {
    if (known(intent.ruleId, created.offset, created.nodeId)) {
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

export type PruneRecoveryDeps = RetryTiming & {
  readonly ledger: Pick<BotLedger, 'latestPrunedOffsets' | 'ledgerEnd' | 'activeContracts'>;
  readonly journal: Pick<Store, 'hasEventIntent' | 'hasEventIntentAsync'>;
  readonly parties: Readonly<Record<string, string>>;
  /** Intake: the recovery gives up when it aborts. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  readonly metrics: BotMetrics;
  /** The rules the live stream evaluates (paused ones stay paused). */
  readonly liveRules: () => readonly CompiledRule[];
  /** See UpdateFollowerDeps.index. */
  readonly index: (offset: number) => RuleIndex;
  readonly ingest: TransactionIngest;
  readonly checkpoint: Checkpoint;
};

/**
 * The updates stream hit offsets the participant pruned (PARTICIPANT_PRUNED_DATA_ACCESSED):
 * evaluates the `created` rules on the contracts created in the pruned range that are still
 * active at the pruning offset, then moves the checkpoint there (see docs/runtime.md, pruning).
 */
export class PruneRecovery {
  readonly #d: PruneRecoveryDeps;

  constructor(deps: PruneRecoveryDeps) {
    this.#d = deps;
  }

  /** Retries with backoff until it gets through or the intake stops; the offset to resume after. */
  recover(from: number, err: unknown): Promise<number> {
    const earliest = earliestOffsetOf(err);
    const d = this.#d;
    return retryOnClock(() => this.#recoverOnce(from, earliest), {
      timing: d,
      signal: d.signal,
      onRetry: (e, wait) =>
        d.logger.error(
          { stream: 'updates', fromOffset: from, delayMs: wait.delayMs, ...errorFields(e) },
          'pruning recovery failed; retrying',
        ),
    });
  }

  async #recoverOnce(from: number, earliest: string | undefined): Promise<number> {
    const { ledger, signal } = this.#d;
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
    const plan = pruneRecoveryPlan({ rules: this.#d.liveRules(), warnings: [] }, this.#d.parties);
    const counts: RecoveryCounts = { at: pruned, contracts: 0, intents: 0, known: 0 };
    if (plan.eventFormat !== null) {
      const contracts = gapContracts(
        ledger,
        { at: pruned, after: from, eventFormat: plan.eventFormat },
        signal,
      );
      const createdRules = this.#d
        .liveRules()
        .filter((r) => r.enabled && r.trigger.kind === 'created')
        .map((r) => r.id);
      for await (const { created, synchronizerId } of contracts) {
        counts.contracts += 1;
        // Asked ahead, asynchronously: a store may have to look below its checkpoint.
        const seen = await this.#knownRules(createdRules, created.offset, created.nodeId);
        const known = (ruleId: string, offset: number, nodeId: number): boolean =>
          seen.get(ruleId) ?? this.#d.journal.hasEventIntent(ruleId, offset, nodeId);
        const tx = recoveredTransaction(created, synchronizerId);
        const recorded = await this.#d.ingest.ingest(tx, tx.offset, {
          index: this.#d.index(tx.offset),
          live: false,
          rekey: (intents, t) => rekeyRecovered(intents, t, counts, known),
        });
        counts.intents += recorded.inserted;
        counts.known += recorded.existing;
      }
    }
    this.#d.metrics.prunedRestarts += 1;
    this.#d.logger.error(
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
        detail: LOST_DETAIL,
      },
      'PRUNED OFFSETS SKIPPED: EVENTS LOST',
    );
    // Only now: a crash during the recovery repeats it, and the journal check in
    // rekeyRecovered keeps the repeat from firing twice.
    this.#d.checkpoint.reset(pruned, { positions: true });
    return pruned;
  }

  /** Whether the journal has an intent of each rule for the event at `offset` / `nodeId`. */
  async #knownRules(
    ruleIds: readonly string[],
    offset: number,
    nodeId: number,
  ): Promise<Map<string, boolean>> {
    const journal = this.#d.journal;
    const seen = new Map<string, boolean>();
    for (const id of ruleIds) {
      seen.set(
        id,
        journal.hasEventIntentAsync === undefined
          ? journal.hasEventIntent(id, offset, nodeId)
          : await journal.hasEventIntentAsync(id, offset, nodeId),
      );
    }
    return seen;
  }
}

const LOST_DETAIL =
  'the participant pruned offsets the bot had not read: created rules were evaluated on the contracts created between fromOffset and toOffset that are still active; contracts created AND archived in that range, and its exercises and archives (notRecoveredRules), are lost. Resuming at toOffset';
