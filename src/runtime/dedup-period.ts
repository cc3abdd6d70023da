import { isDedupPeriodRefused } from '../ledger/error-checks.js';
import type { IntentRecord } from '../store/store.js';
import type { BotLedger } from './bot-ledger.js';
import type { DedupConfig } from './config/bot-config.js';
import { prunedUpTo } from './pruned-up-to.js';
import type { DedupChoice } from './submission-payload.js';

/**
 * The dedup period of an intent's first attempt: anchored at the justifying offset (or, in
 * `duration` mode, the configured duration); a schedule slot's reaches back to the slot time.
 */
export function initialDedup(record: IntentRecord, config: DedupConfig): DedupChoice {
  if (record.trigger.kind === 'slot') return { kind: 'since', fromMs: record.trigger.slot };
  return config.mode === 'duration'
    ? { kind: 'duration', ms: config.valueMs }
    : { kind: 'offset', offset: record.offset };
}

/** The configured dedup duration, the fallback when an anchor is refused. */
export function fallbackDurationMs(config: DedupConfig): number {
  return config.mode === 'offset' ? config.fallbackMs : config.valueMs;
}

/**
 * What to do when an attempt failed, as far as its dedup period goes:
 * - `fall-back`: the participant refused the offset anchor (pruned, or a slot's window beyond
 *   its maximum): retry at once with the configured duration;
 * - `anchor-at-pruning`: it refused the duration too, and no attempt is in doubt: see
 *   `anchorAfterPruning`;
 * - `none`: not a refusal of the dedup period, or one with an attempt in doubt, which the
 *   error's classification decides (it is final).
 */
export type DedupStep =
  | { readonly kind: 'fall-back'; readonly ms: number }
  | { readonly kind: 'anchor-at-pruning' }
  | { readonly kind: 'none' };

export function dedupStep(
  err: unknown,
  current: DedupChoice,
  inDoubt: boolean,
  config: DedupConfig,
): DedupStep {
  if (!isDedupPeriodRefused(err)) return { kind: 'none' };
  if (current.kind === 'duration')
    return inDoubt ? { kind: 'none' } : { kind: 'anchor-at-pruning' };
  // A slot's window back to its time can exceed the participant's maximum (a long catch-up):
  // then the configured duration is the best that is still accepted.
  return { kind: 'fall-back', ms: fallbackDurationMs(config) };
}

/**
 * The participant refused both the offset anchor and the duration fallback: the dedup period
 * the change needs reaches before the pruning offset, so the ledger can no longer say whether
 * an earlier submission of this change committed. For an intent in doubt (an attempt may have
 * committed) resubmitting could make the change twice, so it is dead-lettered.
 * But when the journal shows that EVERY attempt of this commandId got a definite rejection
 * (`inDoubt` unset: no timeout, lost response, restart with an attempt out or unclassifiable
 * answer), none of them can have committed, and the only reason to give up would be the
 * pruning itself. Then it is resubmitted with the dedup period anchored at the pruning offset,
 * the earliest the participant accepts: that still guards its own retries and any later
 * submission of the same change. The one thing it cannot see is a commit of the same
 * commandId by ANOTHER replica before the pruning offset (see docs/runtime.md).
 *
 * Returns the offset to anchor at, or undefined when there is none to move to (nothing pruned,
 * the pruning offset unknown (0), or not past the anchor already tried): then give up.
 */
export function anchorAfterPruning(
  prunedUpTo: number,
  previousAnchor: number | undefined,
): number | undefined {
  if (prunedUpTo <= 0) return undefined;
  if (previousAnchor !== undefined && prunedUpTo <= previousAnchor) return undefined;
  return prunedUpTo;
}

/**
 * `anchorAfterPruning` at the participant's pruning offset, read now. A failed read counts as
 * nothing pruned: giving up is the safe side. Undefined also when `signal` aborted.
 */
export async function pruningAnchor(
  ledger: Pick<BotLedger, 'latestPrunedOffsets'>,
  previousAnchor: number | undefined,
  signal: AbortSignal,
): Promise<number | undefined> {
  let pruned = 0;
  try {
    pruned = await prunedUpTo(ledger, { signal });
  } catch {
    // Unknown (or aborted, which the caller checks).
  }
  return anchorAfterPruning(pruned, previousAnchor);
}
