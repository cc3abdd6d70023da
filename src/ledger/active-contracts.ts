import { throwIfAborted } from '../core/abort-error.js';
import { LedgerUsageError } from './ledger-usage-error.js';
import type {
  EventFormat,
  GetActiveContractsPageRequest,
  GetActiveContractsRequest,
  JsGetActiveContractsPageResponse,
  JsGetActiveContractsResponse,
} from './wire/wire-types.js';

/**
 * How to read the active contract set:
 * - `websocket`: one streamed snapshot (3.4 and 3.5; the only way on 3.4 beyond 200 contracts);
 * - `list`: `POST /v2/state/active-contracts` in chunks of at most 200, each continued from the last
 *   element's 3.5 `streamContinuationToken`;
 * - `page`: 3.5 `POST /v2/state/active-contracts-page`, cursor-paged with `pageToken`.
 */
export type ActiveContractsMode = 'websocket' | 'list' | 'page';

export type ActiveContractsRequest = {
  /** The snapshot offset; usually the ledger end read just before. */
  readonly activeAtOffset: number;
  readonly eventFormat: EventFormat;
};

export type ActiveContractsOptions = {
  readonly mode?: ActiveContractsMode;
  /** Elements per HTTP call for `list` (1..200) and `page`. Default 200. */
  readonly pageSize?: number;
  readonly signal?: AbortSignal;
};

/** What the unified iterator needs of the client; kept structural so the client can own it. */
export type ActiveContractsSources = {
  listActiveContracts(
    req: {
      activeAtOffset: number;
      eventFormat: EventFormat;
      streamContinuationToken?: string;
    },
    options: { limit: number; signal?: AbortSignal },
  ): Promise<JsGetActiveContractsResponse[]>;
  activeContractsPage(
    req: GetActiveContractsPageRequest,
    options: { signal?: AbortSignal },
  ): Promise<JsGetActiveContractsPageResponse>;
  activeContractsSocket(
    req: GetActiveContractsRequest,
    options: { signal?: AbortSignal },
  ): AsyncIterable<JsGetActiveContractsResponse>;
};

/**
 * The active contracts at one offset as one async iterator, whichever transport is used. Memory
 * stays bounded by one page (HTTP) or the socket's buffer (websocket).
 */
export async function* readActiveContracts(
  sources: ActiveContractsSources,
  request: ActiveContractsRequest,
  options: ActiveContractsOptions = {},
): AsyncGenerator<JsGetActiveContractsResponse, void, undefined> {
  const mode = options.mode ?? 'websocket';
  const pageSize = options.pageSize ?? 200;
  const signal = options.signal;
  const withSignal = signal === undefined ? {} : { signal };
  if (mode === 'websocket') {
    yield* sources.activeContractsSocket(
      { activeAtOffset: request.activeAtOffset, eventFormat: request.eventFormat },
      withSignal,
    );
    return;
  }
  if (mode === 'page') {
    let pageToken: string | undefined;
    for (;;) {
      throwIfAborted(signal);
      const page = await sources.activeContractsPage(
        {
          activeAtOffset: request.activeAtOffset,
          eventFormat: request.eventFormat,
          maxPageSize: pageSize,
          ...(pageToken === undefined ? {} : { pageToken }),
        },
        withSignal,
      );
      yield* page.activeContracts;
      // The last page has `"nextPageToken": null` (decoded away) or, from some servers, "".
      pageToken = nonEmptyToken(page.nextPageToken);
      if (pageToken === undefined) return;
    }
  }
  // list: a full chunk means there may be more; only a continuation token can fetch them.
  let token: string | undefined;
  for (;;) {
    throwIfAborted(signal);
    const chunk = await sources.listActiveContracts(
      {
        activeAtOffset: request.activeAtOffset,
        eventFormat: request.eventFormat,
        ...(token === undefined ? {} : { streamContinuationToken: token }),
      },
      { limit: pageSize, ...withSignal },
    );
    yield* chunk;
    if (chunk.length < pageSize) return;
    const last = chunk[chunk.length - 1];
    token = nonEmptyToken(last?.streamContinuationToken);
    if (token === undefined) {
      throw new LedgerUsageError(
        `the active contract set at offset ${request.activeAtOffset} has more than ${pageSize} ` +
          'contracts and the participant sends no streamContinuationToken (Canton 3.4): ' +
          'use mode "websocket" or "page"',
      );
    }
  }
}

/** A token to continue from, or undefined for none: missing, `null` or empty alike. */
function nonEmptyToken(token: unknown): string | undefined {
  return typeof token === 'string' && token !== '' ? token : undefined;
}
