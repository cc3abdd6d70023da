import type { CallOptions } from '../ledger/http-transport.js';
import type { CreatedEvent, EventFormat, JsTransaction } from '../ledger/wire/wire-types.js';
import type { RuleSet } from '../rules/compiled-rule.js';
import type { BotLedger } from './bot-ledger.js';
import { planSubscription } from './subscription-plan.js';

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
 * The offset up to which the participant pruned (inclusive): the oldest point the updates
 * stream can resume from and the active contract set can still be read at. Zero when the
 * participant says it has not pruned.
 */
export async function prunedUpTo(
  ledger: Pick<BotLedger, 'latestPrunedOffsets'>,
  options?: CallOptions,
): Promise<number> {
  const res = await ledger.latestPrunedOffsets(options);
  const offset = res.participantPrunedUpToInclusive ?? 0;
  return Number.isSafeInteger(offset) && offset > 0 ? offset : 0;
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
export function recoveredTransaction(created: CreatedEvent, synchronizerId: string): JsTransaction {
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
