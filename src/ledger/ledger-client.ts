import { AbortError } from '../core/abort-error.js';
import { IllegalStateError } from '../core/illegal-state-error.js';
import { createHttpTransport, type CallOptions, type HttpTransport } from './http-transport.js';
import { badShape, callOptions, JsonCalls, type ListOptions } from './json-calls.js';
import { PartyAndUserEndpoints } from './party-and-user-endpoints.js';
import {
  transactionByIdBody,
  type ConnectedSynchronizersQuery,
  type ListActiveContractsRequest,
  type ListUpdatesRequest,
  type Readiness,
  type TransactionByIdRequest,
} from './ledger-requests.js';
import { loadTlsMaterial } from './load-tls-material.js';
import { resolveConnection, type ResolvedLedgerConnection } from './resolve-connection.js';
import {
  readActiveContracts,
  type ActiveContractsOptions,
  type ActiveContractsRequest,
} from './active-contracts.js';
import type { LedgerConnectionOptions } from './ledger-connection.js';
import { fetchPackageArchive, type PackageArchiveOptions } from './package-archive.js';
import { activeContractsSocket } from './ws/active-contracts-socket.js';
import { streamCompletions, type StreamCompletionsRequest } from './ws/completion-stream.js';
import type { ResumableStream } from './ws/resumable-stream.js';
import { streamContext, type StreamContext, type StreamOptions } from './ws/stream-context.js';
import {
  streamUpdates,
  type StreamUpdatesRequest,
  type UpdateElement,
} from './ws/update-stream.js';
import type { CompletionElement } from './ws/completion-stream.js';
import type {
  CompletionStreamRequest,
  CompletionStreamResponse,
  GetActiveContractsPageRequest,
  GetCompletionsRequest,
  GetConnectedSynchronizersResponse,
  GetEventsByContractIdRequest,
  GetLatestPrunedOffsetsResponse,
  GetLedgerApiVersionResponse,
  GetUpdateByIdRequest,
  GetUpdateByOffsetRequest,
  GetUpdatesPageRequest,
  JsCommands,
  JsGetActiveContractsPageResponse,
  JsGetActiveContractsResponse,
  JsGetEventsByContractIdResponse,
  JsGetTransactionResponse,
  JsGetUpdateResponse,
  JsGetUpdatesPageResponse,
  JsGetUpdatesResponse,
  JsSubmitAndWaitForTransactionResponse,
  SubmitAndWaitResponse,
  SubmitResponse,
  TransactionFormat,
} from './wire/wire-types.js';

// The client's request types, importable from here as before they moved.
export { MAX_LIST_LIMIT, type ListOptions } from './json-calls.js';
export type {
  ConnectedSynchronizersQuery,
  IdentityProviderOption,
  ListActiveContractsRequest,
  ListPartiesQuery,
  ListUpdatesRequest,
  ListUsersQuery,
  Readiness,
  TransactionByIdRequest,
} from './ledger-requests.js';

/**
 * One typed method per JSON Ledger API v2 endpoint the bot uses. Every method takes optional
 * `{signal, timeoutMs}` last. Failures are LedgerApiError (the participant said no),
 * LedgerTransportError (no readable answer), AbortError or LedgerUsageError. The party and user
 * management methods are in party-and-user-endpoints.ts, the shared call plumbing in json-calls.ts.
 */
export class LedgerClient extends PartyAndUserEndpoints {
  /** The connection settings (no secrets), for the websocket streams to reuse. */
  readonly connection: ResolvedLedgerConnection;
  readonly transport: HttpTransport;

  readonly #streams: StreamContext;
  /** Aborts every stream the client opened, at `close`. */
  readonly #closing = new AbortController();

  constructor(transport: HttpTransport, streams: StreamContext) {
    super(new JsonCalls(transport));
    this.transport = transport;
    this.connection = transport.connection;
    this.#streams = streams;
  }

  /** Reads the TLS files and sets up the connection pool; connects lazily on the first call. */
  static async create(options: LedgerConnectionOptions): Promise<LedgerClient> {
    // Resolving first reports a bad URL before any TLS file is read.
    const { tls } = resolveConnection(options);
    // Read once, for both the HTTP agent and the websockets.
    const material = tls === undefined ? undefined : await loadTlsMaterial(tls);
    const transport = await createHttpTransport(options, material);
    return new LedgerClient(transport, await streamContext(options, material));
  }

  // ---- streams (websocket) ----

  /**
   * The `/v2/updates` websocket as an async iterator of typed updates. It reconnects with
   * jittered backoff and resumes after the last offset it yielded, checkpoints included.
   */
  updates(request: StreamUpdatesRequest, options?: StreamOptions): ResumableStream<UpdateElement> {
    return streamUpdates(this.#streams, request, this.#untilClosed('updates', options));
  }

  /** The completions websocket, resumed like `updates`. */
  completions(
    request: StreamCompletionsRequest,
    options?: StreamOptions,
  ): ResumableStream<CompletionElement> {
    return streamCompletions(this.#streams, request, this.#untilClosed('completions', options));
  }

  /**
   * The active contracts at one offset, over the websocket (default), the POST list or the 3.5
   * page endpoint; the caller gets the same iterator whichever is used.
   */
  activeContracts(
    request: ActiveContractsRequest,
    options?: ActiveContractsOptions,
  ): AsyncGenerator<JsGetActiveContractsResponse, void, undefined> {
    const streams = this.#streams;
    return readActiveContracts(
      {
        listActiveContracts: (req, opts) => this.listActiveContracts(req, opts),
        activeContractsPage: (req, opts) => this.activeContractsPage(req, opts),
        activeContractsSocket: (req, opts) => activeContractsSocket(streams, req, opts),
      },
      request,
      this.#untilClosed('activeContracts', options),
    );
  }

  /**
   * Closes the connection pool and ends every stream the client opened: a loop over one throws
   * AbortError (a stream waiting to reconnect stops waiting). Every call after it throws.
   */
  close(): Promise<void> {
    this.#closing.abort(new AbortError('the ledger client is closed'));
    return this.transport.close();
  }

  /** `options` whose signal also aborts at `close`; a closed client opens no stream. */
  #untilClosed<O extends { readonly signal?: AbortSignal | undefined }>(
    what: string,
    options: O | undefined,
  ): O {
    if (this.#closing.signal.aborted) {
      throw new IllegalStateError(`${what}: the ledger client is closed.`);
    }
    const signal =
      options?.signal === undefined
        ? this.#closing.signal
        : AbortSignal.any([options.signal, this.#closing.signal]);
    return { ...(options ?? ({} as O)), signal };
  }

  // ---- state ----

  /** The ledger end offset (0 for an empty ledger). */
  async ledgerEnd(options?: CallOptions): Promise<number> {
    const res = await this.json.object<{ offset?: unknown }>(
      'GET',
      '/v2/state/ledger-end',
      options,
    );
    const offset = res.offset ?? 0;
    if (typeof offset !== 'number') {
      throw badShape('GET /v2/state/ledger-end', 'offset is not a number');
    }
    return offset;
  }

  latestPrunedOffsets(options?: CallOptions): Promise<GetLatestPrunedOffsetsResponse> {
    return this.json.object('GET', '/v2/state/latest-pruned-offsets', options);
  }

  connectedSynchronizers(
    query: ConnectedSynchronizersQuery = {},
    options?: CallOptions,
  ): Promise<GetConnectedSynchronizersResponse> {
    return this.json.object('GET', '/v2/state/connected-synchronizers', options, {
      query: {
        party: query.party,
        participantId: query.participantId,
        identityProviderId: query.identityProviderId,
      },
    });
  }

  /** One bounded page of the active contract set at `activeAtOffset` (see `activeContractsPage`). */
  listActiveContracts(
    req: ListActiveContractsRequest,
    options?: ListOptions,
  ): Promise<JsGetActiveContractsResponse[]> {
    return this.json.list('/v2/state/active-contracts', options, {
      activeAtOffset: req.activeAtOffset,
      eventFormat: req.eventFormat,
      ...(req.streamContinuationToken === undefined
        ? {}
        : { streamContinuationToken: req.streamContinuationToken }),
    });
  }

  /** 3.5 only: cursor-paged active contracts. */
  activeContractsPage(
    req: GetActiveContractsPageRequest,
    options?: CallOptions,
  ): Promise<JsGetActiveContractsPageResponse> {
    return this.json.object('POST', '/v2/state/active-contracts-page', options, { body: req });
  }

  // ---- updates ----

  /** Updates after `beginExclusive`, at most `limit` of them. */
  listUpdates(req: ListUpdatesRequest, options?: ListOptions): Promise<JsGetUpdatesResponse[]> {
    return this.json.list('/v2/updates', options, {
      beginExclusive: req.beginExclusive,
      ...(req.endInclusive === undefined ? {} : { endInclusive: req.endInclusive }),
      updateFormat: req.updateFormat,
      ...(req.descendingOrder === undefined ? {} : { descendingOrder: req.descendingOrder }),
    });
  }

  /** 3.5 only: cursor-paged updates. */
  updatesPage(
    req: GetUpdatesPageRequest,
    options?: CallOptions,
  ): Promise<JsGetUpdatesPageResponse> {
    return this.json.object('POST', '/v2/updates/get-updates-page', options, { body: req });
  }

  updateById(req: GetUpdateByIdRequest, options?: CallOptions): Promise<JsGetUpdateResponse> {
    return this.json.object('POST', '/v2/updates/update-by-id', options, { body: req });
  }

  updateByOffset(
    req: GetUpdateByOffsetRequest,
    options?: CallOptions,
  ): Promise<JsGetUpdateResponse> {
    return this.json.object('POST', '/v2/updates/update-by-offset', options, { body: req });
  }

  eventsByContractId(
    req: GetEventsByContractIdRequest,
    options?: CallOptions,
  ): Promise<JsGetEventsByContractIdResponse> {
    return this.json.object('POST', '/v2/events/events-by-contract-id', options, { body: req });
  }

  /** @deprecated since Canton 3.5; use `updateById`. */
  async transactionById(
    req: TransactionByIdRequest,
    options?: CallOptions,
  ): Promise<JsGetTransactionResponse> {
    const body = transactionByIdBody(req);
    return await this.json.object('POST', '/v2/updates/transaction-by-id', options, { body });
  }

  // ---- commands ----

  /** Asynchronous submission; the outcome arrives as a completion. */
  submit(commands: JsCommands, options?: CallOptions): Promise<SubmitResponse> {
    return this.json.object('POST', '/v2/commands/async/submit', options, { body: commands });
  }

  submitAndWait(commands: JsCommands, options?: CallOptions): Promise<SubmitAndWaitResponse> {
    return this.json.object('POST', '/v2/commands/submit-and-wait', options, { body: commands });
  }

  /** Without a format the node uses ACS_DELTA with wildcards for all actAs and readAs parties. */
  submitAndWaitForTransaction(
    commands: JsCommands,
    transactionFormat?: TransactionFormat,
    options?: CallOptions,
  ): Promise<JsSubmitAndWaitForTransactionResponse> {
    return this.json.object('POST', '/v2/commands/submit-and-wait-for-transaction', options, {
      body: transactionFormat === undefined ? { commands } : { commands, transactionFormat },
    });
  }

  /** Completions after `beginExclusive` (the node answers once the stream is idle). */
  listCompletions(
    req: CompletionStreamRequest,
    options?: ListOptions,
  ): Promise<CompletionStreamResponse[]> {
    return this.json.list('/v2/commands/completions', options, req);
  }

  /** 3.5 only: completions without a userId filter. */
  listCommandCompletions(
    req: GetCompletionsRequest,
    options?: ListOptions,
  ): Promise<CompletionStreamResponse[]> {
    return this.json.list('/v2/commands/command-completions', options, req);
  }

  // ---- packages, version, health ----

  async listPackages(options?: CallOptions): Promise<string[]> {
    const res = await this.json.object<{ packageIds?: unknown }>('GET', '/v2/packages', options);
    const ids = res.packageIds ?? [];
    if (!Array.isArray(ids) || !ids.every((id): id is string => typeof id === 'string')) {
      throw badShape('GET /v2/packages', 'packageIds is not a list of strings');
    }
    return ids;
  }

  /**
   * The archive payload of one package (`GET /v2/packages/{id}`, octet-stream), its sha256
   * checked against the id and the `Canton-Package-Hash` header (see package-archive.ts).
   */
  packageArchive(packageId: string, options?: PackageArchiveOptions): Promise<Uint8Array> {
    return fetchPackageArchive(this.transport, packageId, options);
  }

  version(options?: CallOptions): Promise<GetLedgerApiVersionResponse> {
    return this.json.object('GET', '/v2/version', options);
  }

  /** True when the node is alive, false when it says 503; throws when it cannot be reached. */
  async livez(options?: CallOptions): Promise<boolean> {
    const res = await this.transport.exchange('GET', '/livez', {
      ...callOptions(options),
      accept: 'text',
      okStatuses: [503],
    });
    return res.status >= 200 && res.status < 300;
  }

  /** A 503 with a text body means "not ready" and is an answer, not an error. */
  async readyz(options?: CallOptions): Promise<Readiness> {
    const res = await this.transport.exchange('GET', '/readyz', {
      ...callOptions(options),
      accept: 'text',
      okStatuses: [503],
    });
    return { ready: res.status >= 200 && res.status < 300, text: String(res.body) };
  }
}
