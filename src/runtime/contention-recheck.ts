import type { Logger } from '../core/logger.js';
import { isKeyConflict } from '../ledger/error-checks.js';
import type { BotLedger } from './bot-ledger.js';
import {
  completionsPruned,
  findCommittedCompletion,
  type CompletionLookup,
} from './completion-lookup.js';
import {
  contractIdsToCheck,
  earlierCommitUnknown,
  findEarlierCommit,
  lostToPruning,
  type EarlierCommit,
} from './earlier-commit.js';
import { errorFields, type ErrorRecord } from './error-record.js';
import { intentFields } from './intent-log.js';
import type { TrackedIntent } from './tracked-intent.js';

/** What a contention re-check reads of the ledger. */
export type RecheckLedger = Pick<
  BotLedger,
  'eventsByContractId' | 'updateByOffset' | 'latestPrunedOffsets' | 'ledgerEnd' | 'listCompletions'
>;

/** What the lookups found (see `findEarlierCommit`, `lostToPruning`, `findCommittedCompletion`). */
export type RecheckFindings = {
  readonly found: EarlierCommit;
  /** Whether pruning may hide our own archive of `found`; undefined when it cannot be read. */
  readonly pruned: boolean | undefined;
  /** The completions' answer, read only when no archived input can tell. */
  readonly completed: CompletionLookup | undefined;
};

type Intent = Pick<TrackedIntent, 'commandId' | 'record'>;

/**
 * Contention: the inputs changed under the command. Canton interprets before it deduplicates,
 * so this is also how a resubmission of a consuming command whose earlier attempt committed
 * fails. So: did one of this commandId's attempts (ours, an earlier run's or a twin replica's)
 * archive the contract it needs, or, for a keyed create or a refusal naming no contract, does
 * its completion show a success? Undefined when `signal` aborted (the bot is stopping).
 */
export async function recheckFindings(
  ledger: RecheckLedger,
  t: Intent,
  err: unknown,
  logger: Logger,
  signal: AbortSignal,
): Promise<RecheckFindings | undefined> {
  const contractIds = contractIdsToCheck(t.record.payload, err);
  try {
    const found = await findEarlierCommit(
      ledger,
      {
        commandId: t.commandId,
        parties: [...new Set([...t.record.payload.actAs, ...t.record.payload.readAs])],
        contractIds,
      },
      { signal },
    );
    // Only an intent one of whose attempts may have committed can have archived it itself.
    const pruned =
      t.record.inDoubt === true
        ? await lostToPruning(ledger, found, t.record.offset, { signal })
        : false;
    let completed: CompletionLookup | undefined;
    if (found.kind === 'active' && (contractIds.length === 0 || isKeyConflict(err))) {
      // No archived input tells whose command it was: a keyed create (or createAndExercise)
      // refused because its key is taken, maybe by its own earlier attempt, or a refusal that
      // names no contract at all. Its completion says.
      completed = await findCommittedCompletion(
        ledger,
        {
          userId: t.record.userId,
          actAs: t.record.payload.actAs,
          commandId: t.commandId,
          afterOffset: t.record.offset,
        },
        logger,
        { signal },
      );
    }
    return { found, pruned, completed };
  } catch {
    return undefined; // aborted: the lookups throw nothing else
  }
}

/**
 * - `succeeded`: an attempt of ours committed (`via` its completion or the archive it made);
 * - `rejected`: another command archived an input (or it is not visible): no longer needed;
 * - `dead-letter`: pruning hides whether an attempt of ours committed; an operator decides;
 * - `retry`: the inputs are still active, or a lookup failed (`unknown` says which): guessing
 *   `rejected` could bury a success, so retry under dedup.
 */
export type RecheckVerdict =
  | {
      readonly kind: 'succeeded';
      readonly via: 'completion' | 'archive';
      readonly updateId: string;
      readonly offset: number;
      readonly contractId?: string;
    }
  | {
      readonly kind: 'rejected';
      readonly contractId: string;
      readonly archivedBy?: { readonly updateId: string; readonly offset: number };
    }
  | { readonly kind: 'dead-letter'; readonly lastError: ErrorRecord }
  | {
      readonly kind: 'retry';
      readonly unknown?: {
        readonly lookup: 'completions' | 'archive';
        readonly error: unknown;
        readonly contractId?: string;
      };
    };

/** The verdict of a re-check from its findings. Pure. */
export function recheckVerdict(
  findings: RecheckFindings,
  t: Pick<TrackedIntent, 'record' | 'lastError'>,
): RecheckVerdict {
  const { completed, pruned } = findings;
  let found = findings.found;
  const inDoubt = t.record.inDoubt === true;
  if (completed?.kind === 'ours') {
    return {
      kind: 'succeeded',
      via: 'completion',
      updateId: completed.updateId,
      offset: completed.offset,
    };
  }
  if (completed?.kind === 'pruned' && inDoubt) {
    // One of our attempts may have committed, and its completion may be in the pruned range:
    // a retry would be refused the same way (the key stays taken), so an operator decides, as
    // for a pruned archive (docs/runtime.md). Never in doubt: none of ours committed, retry.
    return {
      kind: 'dead-letter',
      lastError: completionsPruned(t.record.offset, completed.prunedUpTo, t.lastError),
    };
  }
  if (pruned === true && found.kind === 'gone') {
    // The ledger can no longer say who archived it; `rejected` could bury our own success, and
    // a retry would be refused the same way for ever: an operator decides (docs/runtime.md).
    return {
      kind: 'dead-letter',
      lastError: earlierCommitUnknown(found.contractId, t.record.offset, t.lastError),
    };
  }
  if (pruned === undefined && found.kind === 'gone') {
    // Whether it was pruned cannot be read now: as for any failed lookup, retry.
    found = {
      kind: 'unknown',
      contractId: found.contractId,
      error: new Error('the participant did not say how far it has pruned'),
    };
  }
  switch (found.kind) {
    case 'ours':
      return {
        kind: 'succeeded',
        via: 'archive',
        updateId: found.updateId,
        offset: found.offset,
        contractId: found.contractId,
      };
    case 'gone':
      return {
        kind: 'rejected',
        contractId: found.contractId,
        ...(found.archivedBy === undefined ? {} : { archivedBy: found.archivedBy }),
      };
    case 'unknown':
      return {
        kind: 'retry',
        unknown: { lookup: 'archive', error: found.error, contractId: found.contractId },
      };
    case 'active':
      return completed?.kind === 'unknown'
        ? { kind: 'retry', unknown: { lookup: 'completions', error: completed.error } }
        : { kind: 'retry' };
  }
}

/** The rejection's error: the last error, why the intent was given up, and what archived it. */
export function notNeededError(
  verdict: Extract<RecheckVerdict, { kind: 'rejected' }>,
  lastError: ErrorRecord | undefined,
): Record<string, unknown> {
  return {
    ...lastError,
    reason: 'not-needed',
    contractId: verdict.contractId,
    ...(verdict.archivedBy === undefined ? {} : { archivedBy: verdict.archivedBy }),
  };
}

/** The log line of a verdict, besides the intent state change it leads to (if any). */
export function logRecheckVerdict(
  logger: Logger,
  t: Pick<TrackedIntent, 'record' | 'lastError'>,
  verdict: RecheckVerdict,
): void {
  const ids = { ...intentFields(t.record), errorCode: t.lastError?.code };
  switch (verdict.kind) {
    case 'succeeded':
      logger.info(
        {
          ...ids,
          foundVia: verdict.via,
          ...(verdict.contractId === undefined ? {} : { contractId: verdict.contractId }),
          completionUpdateId: verdict.updateId,
          completionOffset: verdict.offset,
        },
        'earlier attempt committed; settling succeeded',
      );
      return;
    case 'rejected':
      logger.info(
        {
          ...ids,
          contractId: verdict.contractId,
          ...(verdict.archivedBy === undefined
            ? {}
            : {
                archivedByUpdateId: verdict.archivedBy.updateId,
                archivedAt: verdict.archivedBy.offset,
              }),
        },
        'input contract no longer active; not retrying',
      );
      return;
    case 'retry': {
      if (verdict.unknown === undefined) return;
      const { lookup, error, contractId } = verdict.unknown;
      logger.warn(
        {
          ...intentFields(t.record),
          lookup,
          ...(contractId === undefined ? {} : { contractId }),
          ...errorFields(error),
        },
        'cannot tell whether an earlier attempt committed; retrying',
      );
      return;
    }
    case 'dead-letter':
      return; // the dead letter's own log line says it
  }
}
