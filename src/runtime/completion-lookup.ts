import type { Logger } from '../core/logger.js';
import { completionError } from '../ledger/completion-status.js';
import { isPrunedDataAccess } from '../ledger/error-checks.js';
import type { CallOptions } from '../ledger/http-transport.js';
import { decodeCompletion } from '../ledger/ws/completion-stream.js';
import type { BotLedger } from './bot-ledger.js';
import { earlierCommitUnknownRecord, type ErrorRecord } from './error-record.js';
import { prunedUpTo } from './pruned-up-to.js';

/** What `findCommittedCompletion` reads of the ledger. */
export type CompletionLookupLedger = Pick<
  BotLedger,
  'ledgerEnd' | 'listCompletions' | 'latestPrunedOffsets'
>;

export type CompletionLookupQuery = {
  readonly userId: string;
  /** The intent's actAs: completions are reported to the submitting parties. */
  readonly actAs: readonly string[];
  readonly commandId: string;
  /** The intent's justifying offset: every attempt of the intent completed after it. */
  readonly afterOffset: number;
};

/**
 * - `ours`: a successful completion of this commandId (any attempt, run or replica of the same
 *   user) at `offset`, for the transaction `updateId`;
 * - `none`: every completion up to the ledger end was read, and none is a success of it;
 * - `pruned`: the participant pruned the completions after `afterOffset` up to `prunedUpTo`;
 *   those after it were read and none is a success of it, so a success can only hide in the
 *   pruned range;
 * - `unknown`: the read failed or was cut short, so a success can be neither seen nor ruled out.
 */
export type CompletionLookup =
  | { readonly kind: 'ours'; readonly updateId: string; readonly offset: number }
  | { readonly kind: 'none' }
  | { readonly kind: 'pruned'; readonly prunedUpTo: number }
  | { readonly kind: 'unknown'; readonly error: unknown };

/** The list endpoint's maximum page (a larger `limit` is refused with 413, NOTES.md §3). */
const PAGE = 200;
/**
 * At most this many pages (10,000 completions) per lookup. Safe because stopping early answers
 * `unknown`, never `none` or `ours`: the tracker then retries under the same commandId (the key,
 * and deduplication where the command reaches it, keep the effect single) and looks again, so
 * the bound can cost a dead letter after max-attempts an operator can requeue, never a wrong
 * verdict. Without it one lookup on a busy participant could read its whole history, once per
 * attempt of every contended intent. Only the last page waits for the node's idle cut-off
 * (500 ms by default, NOTES.md §3): a full page returns as soon as it is full.
 */
const MAX_PAGES = 50;

/**
 * Whether an attempt of the intent committed, read from the user's completions after the intent's
 * offset. This is the check for commands whose repeat fails at interpretation without an archived
 * input to look at: Canton interprets before it deduplicates, so a create of a keyed template
 * whose first attempt committed is refused with DUPLICATE_CONTRACT_KEY, never DUPLICATE_COMMAND.
 *
 * Only an abort of `options.signal` throws; every other failure is an `unknown` answer.
 */
export async function findCommittedCompletion(
  ledger: CompletionLookupLedger,
  query: CompletionLookupQuery,
  logger: Logger,
  options: CallOptions = {},
): Promise<CompletionLookup> {
  try {
    const end = await ledger.ledgerEnd(options);
    let from = query.afterOffset;
    let prunedAt: number | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      if (from >= end) return nothingAfter(prunedAt);
      let responses: unknown[];
      try {
        responses = await ledger.listCompletions(
          { userId: query.userId, parties: [...query.actAs], beginExclusive: from },
          { ...options, limit: PAGE },
        );
      } catch (err) {
        if (!isPrunedDataAccess(err)) throw err;
        // The completions before the pruning offset are gone; those after it can still show
        // our success. Read on from there, and remember that the rest cannot be read.
        const pruned = await prunedUpTo(ledger, options);
        if (pruned <= from) throw err;
        from = pruned;
        prunedAt = pruned;
        continue;
      }
      const before = from;
      for (const response of responses) {
        const element = decodeCompletion(response, logger);
        if (element === undefined) continue;
        from = Math.max(from, element.offset);
        if (element.kind !== 'completion') continue;
        const c = element.completion;
        if (c.commandId !== query.commandId) continue;
        if (completionError(c, 'POST /v2/commands/completions') !== undefined) continue;
        return { kind: 'ours', updateId: c.updateId ?? '', offset: element.offset };
      }
      // The list answers once its stream is idle: no progress means nothing more to read.
      if (from === before) return nothingAfter(prunedAt);
    }
    return {
      kind: 'unknown',
      error: new Error(
        `more than ${MAX_PAGES * PAGE} completions after offset ${query.afterOffset}; not read further`,
      ),
    };
  } catch (err) {
    if (options.signal?.aborted === true) throw err;
    return { kind: 'unknown', error: err };
  }
}

function nothingAfter(prunedAt: number | undefined): CompletionLookup {
  return prunedAt === undefined ? { kind: 'none' } : { kind: 'pruned', prunedUpTo: prunedAt };
}

/** The dead letter's error when pruning hid whether an earlier attempt's completion succeeded. */
export function completionsPruned(
  intentOffset: number,
  prunedUpToOffset: number,
  last: ErrorRecord | undefined,
): ErrorRecord {
  return earlierCommitUnknownRecord(
    `the participant has pruned its completions up to ${prunedUpToOffset}, past the intent's ` +
      `offset ${intentOffset}, and none after it is a success of this command: an earlier ` +
      'attempt may have committed in the pruned range',
    last,
  );
}
