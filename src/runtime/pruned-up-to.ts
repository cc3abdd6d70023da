import type { CallOptions } from '../ledger/http-transport.js';
import type { BotLedger } from './bot-ledger.js';

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
