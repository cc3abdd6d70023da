import { isResourceMissing } from '../ledger/error-checks.js';
import { eventFormat, transactionFormat, updateFormat } from '../ledger/filters.js';
import { LedgerApiError } from '../ledger/ledger-api-error.js';
import type { CallOptions } from '../ledger/http-transport.js';
import type { BotLedger } from './bot-ledger.js';
import { earlierCommitUnknownRecord, type ErrorRecord } from './error-record.js';
import { prunedUpTo } from './pruned-up-to.js';
import type { SubmissionPayload } from './submission-payload.js';

/** What `findEarlierCommit` reads of the ledger. */
export type EarlierCommitLedger = Pick<BotLedger, 'eventsByContractId' | 'updateByOffset'>;

export type EarlierCommitQuery = {
  /** The intent's deterministic commandId (the same for every attempt, run and replica). */
  readonly commandId: string;
  /**
   * The intent's actAs and readAs. Canton fills a transaction's commandId only for readers among
   * its submitting parties (`filteredCommandId` in the 3.5 index), which actAs is.
   */
  readonly parties: readonly string[];
  /** The contracts whose archiving may have been our own command (see `contractIdsToCheck`). */
  readonly contractIds: readonly string[];
};

/**
 * - `ours`: an attempt of this commandId (this process's, an earlier run's or a twin replica's)
 *   committed: it archived `contractId` in `updateId` at `offset`;
 * - `gone`: a contract the command needs was archived by another command, or is not visible;
 * - `active`: every contract looked at is still active (a retry may go through);
 * - `unknown`: a lookup failed, so an earlier commit of ours can be neither seen nor ruled out.
 */
export type EarlierCommit =
  | {
      readonly kind: 'ours';
      readonly contractId: string;
      readonly updateId: string;
      readonly offset: number;
    }
  | {
      readonly kind: 'gone';
      readonly contractId: string;
      /** The archiving transaction, when one was read. */
      readonly archivedBy?: { readonly updateId: string; readonly offset: number };
      /**
       * The participant knows no events of the contract (category 11): never visible to the
       * parties, or pruned, in which case its archiving may have been ours (see `lostToPruning`).
       */
      readonly unseen?: true;
    }
  | { readonly kind: 'active' }
  | { readonly kind: 'unknown'; readonly contractId: string; readonly error: unknown };

/**
 * Whether one of the intent's own attempts is what archived a contract it needs.
 *
 * Canton interprets a command before it deduplicates it (NOTES.md, Corrections): resubmitting a
 * consuming command whose earlier attempt committed fails with CONTRACT_NOT_FOUND (or, if the
 * first was still in flight, LOCAL_VERDICT_INACTIVE_CONTRACTS), never DUPLICATE_COMMAND. The
 * archived event of each contract names the offset of the archiving transaction; that
 * transaction, read for the intent's parties, carries our commandId if we submitted it.
 *
 * Only an abort of `options.signal` throws; every other failure is an `unknown` answer.
 */
export async function findEarlierCommit(
  ledger: EarlierCommitLedger,
  query: EarlierCommitQuery,
  options: CallOptions = {},
): Promise<EarlierCommit> {
  const events = eventFormat({ parties: query.parties });
  let gone: EarlierCommit | undefined;
  let unknown: EarlierCommit | undefined;
  for (const contractId of query.contractIds) {
    const found = await lookUp(ledger, query.commandId, contractId, events, options);
    if (found.kind === 'ours') return found;
    if (found.kind === 'gone') gone ??= found;
    else if (found.kind === 'unknown') unknown ??= found;
  }
  // A failed lookup may hide our own commit: that outweighs another contract's archiving.
  return unknown ?? gone ?? { kind: 'active' };
}

async function lookUp(
  ledger: EarlierCommitLedger,
  commandId: string,
  contractId: string,
  events: ReturnType<typeof eventFormat>,
  options: CallOptions,
): Promise<EarlierCommit> {
  let archivedAt: number | undefined;
  try {
    const res = await ledger.eventsByContractId({ contractId, eventFormat: events }, options);
    // Canton sends `"archived": null` for an active contract: null and missing alike.
    const archived = res.archived as typeof res.archived | null;
    if (archived == null) {
      return res.created == null ? { kind: 'gone', contractId, unseen: true } : { kind: 'active' };
    }
    const offset = (archived.archivedEvent as { offset?: unknown } | null | undefined)?.offset;
    if (typeof offset !== 'number') {
      return { kind: 'unknown', contractId, error: new Error('archived event without offset') };
    }
    archivedAt = offset;
  } catch (err) {
    rethrowAbort(err, options);
    // Category 11: unknown to the participant or not visible to the parties (never ours to see).
    if (isResourceMissing(err)) {
      return { kind: 'gone', contractId, unseen: true };
    }
    return { kind: 'unknown', contractId, error: err };
  }
  try {
    const res = await ledger.updateByOffset(
      {
        offset: archivedAt,
        updateFormat: updateFormat({ transactions: transactionFormat(events) }),
      },
      options,
    );
    const update = res.update as Record<string, unknown> | null | undefined;
    const tx = (update?.Transaction as { value?: unknown } | null | undefined)?.value as
      { updateId?: unknown; commandId?: unknown; offset?: unknown } | null | undefined;
    if (tx == null) {
      // A reassignment or topology update at that offset is nobody's command.
      return { kind: 'gone', contractId };
    }
    const updateId = typeof tx.updateId === 'string' ? tx.updateId : '';
    const offset = typeof tx.offset === 'number' ? tx.offset : archivedAt;
    if (tx.commandId === commandId) return { kind: 'ours', contractId, updateId, offset };
    return { kind: 'gone', contractId, archivedBy: { updateId, offset } };
  } catch (err) {
    rethrowAbort(err, options);
    // Even NOT_FOUND here is no answer: the archive was visible, so its transaction should be.
    return { kind: 'unknown', contractId, error: err };
  }
}

/**
 * Whether a `gone` answer may hide our own commit because the participant pruned the history
 * that would show it: the contract is unknown to it and it has pruned at or past the intent's
 * justifying offset (the contract existed then: it triggered the intent or was read for it).
 * Undefined when the pruning offset cannot be read.
 */
export async function lostToPruning(
  ledger: Pick<BotLedger, 'latestPrunedOffsets'>,
  found: EarlierCommit,
  intentOffset: number,
  options: CallOptions = {},
): Promise<boolean | undefined> {
  if (found.kind !== 'gone' || found.unseen !== true) return false;
  try {
    return (await prunedUpTo(ledger, options)) >= intentOffset;
  } catch (err) {
    rethrowAbort(err, options);
    return undefined;
  }
}

/** The dead letter's error when pruning hid whether an earlier attempt committed. */
export function earlierCommitUnknown(
  contractId: string,
  intentOffset: number,
  last: ErrorRecord | undefined,
): ErrorRecord {
  return earlierCommitUnknownRecord(
    `the contract ${contractId} is unknown to the participant, which has pruned past the ` +
      `intent's offset ${intentOffset}: an earlier attempt of this command may have archived it`,
    last,
  );
}

function rethrowAbort(err: unknown, options: CallOptions): void {
  if (options.signal?.aborted === true) throw err;
}

/** The contracts whose state decides whether a contended intent is still needed. */
export function contractIdsToCheck(payload: SubmissionPayload, err: unknown): string[] {
  const ids = new Set<string>();
  if (err instanceof LedgerApiError) {
    for (const [type, name] of err.error.resources) {
      // The client reads `ErrorResource(CONTRACT_ID)` (errors that came through gRPC) as the
      // bare type, so one form is checked here.
      if (type === 'CONTRACT_ID' || type === 'contract-id') ids.add(name);
    }
  }
  for (const command of payload.commands) {
    if ('ExerciseCommand' in command) ids.add(command.ExerciseCommand.contractId);
  }
  return [...ids].slice(0, 10);
}
