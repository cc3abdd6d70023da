import { LedgerUsageError } from './ledger-usage-error.js';
import type { EventFormat, Right, TransactionFormat, UpdateFormat } from './wire/wire-types.js';

/**
 * The requests and queries of LedgerClient's methods where the client's shape differs from the
 * wire's (a required format, queries as named fields), and the bodies made of them.
 */

/**
 * A GetUpdatesRequest as this client sends it: always both `beginExclusive` (required by 3.5)
 * and `updateFormat` (required by 3.4), never the legacy `filter`/`verbose`.
 */
export type ListUpdatesRequest = {
  readonly beginExclusive: number;
  readonly endInclusive?: number;
  readonly updateFormat: UpdateFormat;
  /** 3.5 only; needs `endInclusive`. */
  readonly descendingOrder?: boolean;
};

/** A GetActiveContractsRequest with `eventFormat` always set (required by 3.4). */
export type ListActiveContractsRequest = {
  readonly activeAtOffset: number;
  readonly eventFormat: EventFormat;
  /** 3.5 only: resumes a broken snapshot after the element that carried it. */
  readonly streamContinuationToken?: string;
};

/**
 * The deprecated transaction-by-id lookup takes either the requesting parties (the server then
 * applies its default format: per-party wildcards, verbose, ACS_DELTA) or a transaction format.
 */
export type TransactionByIdRequest =
  | {
      readonly updateId: string;
      readonly requestingParties: readonly string[];
      readonly transactionFormat?: undefined;
    }
  | {
      readonly updateId: string;
      readonly transactionFormat: TransactionFormat;
      readonly requestingParties?: undefined;
    };

export type ConnectedSynchronizersQuery = {
  readonly party?: string;
  readonly participantId?: string;
  readonly identityProviderId?: string;
};

export type ListPartiesQuery = {
  readonly pageSize?: number;
  readonly pageToken?: string;
  readonly filterParty?: string;
  readonly identityProviderId?: string;
};

export type ListUsersQuery = { readonly pageSize?: number; readonly pageToken?: string };

export type IdentityProviderOption = { readonly identityProviderId?: string };

export type Readiness = { readonly ready: boolean; readonly text: string };

/** The body of a rights grant or revocation. */
export function rightsBody(
  userId: string,
  rights: readonly Right[],
  options: IdentityProviderOption | undefined,
): { userId: string; rights: Right[]; identityProviderId?: string } {
  return {
    userId,
    rights: [...rights],
    ...(options?.identityProviderId === undefined
      ? {}
      : { identityProviderId: options.identityProviderId }),
  };
}

/** The body of the deprecated transaction-by-id lookup: the parties or the format, exactly one. */
export function transactionByIdBody(
  req: TransactionByIdRequest,
):
  | { readonly updateId: string; readonly transactionFormat: TransactionFormat }
  | { readonly updateId: string; readonly requestingParties: string[] } {
  const parties = req.requestingParties;
  const format = req.transactionFormat;
  if ((parties === undefined) === (format === undefined)) {
    throw new LedgerUsageError(
      'transactionById takes requestingParties or transactionFormat, exactly one of them.',
    );
  }
  if (format !== undefined) return { updateId: req.updateId, transactionFormat: format };
  if (parties === undefined || parties.length === 0) {
    throw new LedgerUsageError('transactionById needs at least one requesting party.');
  }
  return { updateId: req.updateId, requestingParties: [...parties] };
}
