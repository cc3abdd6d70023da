import {
  createHttpTransport,
  loadTlsMaterial,
  resolveConnection,
  type CallOptions,
  type HttpMethod,
  type HttpRequestOptions,
  type HttpTransport,
  type ResolvedLedgerConnection,
} from './http-transport.js';
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
import { LedgerTransportError } from './ledger-transport-error.js';
import { LedgerUsageError } from './ledger-usage-error.js';
import type {
  AllocatePartyRequest,
  AllocatePartyResponse,
  CompletionStreamRequest,
  CompletionStreamResponse,
  CreateUserRequest,
  CreateUserResponse,
  EventFormat,
  GetActiveContractsPageRequest,
  GetCompletionsRequest,
  GetConnectedSynchronizersResponse,
  GetEventsByContractIdRequest,
  GetLatestPrunedOffsetsResponse,
  GetLedgerApiVersionResponse,
  GetPartiesResponse,
  GetUpdateByIdRequest,
  GetUpdateByOffsetRequest,
  GetUpdatesPageRequest,
  GetUserResponse,
  GrantUserRightsResponse,
  JsCommands,
  JsGetActiveContractsPageResponse,
  JsGetActiveContractsResponse,
  JsGetEventsByContractIdResponse,
  JsGetTransactionResponse,
  JsGetUpdateResponse,
  JsGetUpdatesPageResponse,
  JsGetUpdatesResponse,
  JsSubmitAndWaitForTransactionResponse,
  ListKnownPartiesResponse,
  ListUserRightsResponse,
  ListUsersResponse,
  RevokeUserRightsResponse,
  Right,
  SubmitAndWaitResponse,
  SubmitResponse,
  TransactionFormat,
  UpdateFormat,
} from './wire/wire-types.js';

/**
 * The node rejects list calls whose result exceeds its `http-list-max-elements-limit` (default
 * 200) with a 413, so list calls never ask for more (NOTES.md §3).
 */
export const MAX_LIST_LIMIT = 200;

export type ListOptions = CallOptions & {
  /** At most this many elements (1..200, default 200). */
  readonly limit?: number;
  /** How long the node waits for another element before it answers (`stream_idle_timeout_ms`). */
  readonly streamIdleTimeoutMs?: number;
};

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

/**
 * One typed method per JSON Ledger API v2 endpoint the bot uses. Every method takes optional
 * `{signal, timeoutMs}` last. Failures are LedgerApiError (the participant said no),
 * LedgerTransportError (no readable answer), AbortError or LedgerUsageError.
 */
export class LedgerClient {
  /** The connection settings (no secrets), for the websocket streams to reuse. */
  readonly connection: ResolvedLedgerConnection;
  readonly transport: HttpTransport;

  readonly #streams: StreamContext;

  constructor(transport: HttpTransport, streams: StreamContext) {
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
    return streamUpdates(this.#streams, request, options);
  }

  /** The completions websocket, resumed like `updates`. */
  completions(
    request: StreamCompletionsRequest,
    options?: StreamOptions,
  ): ResumableStream<CompletionElement> {
    return streamCompletions(this.#streams, request, options);
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
      options,
    );
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  // ---- state ----

  /** The ledger end offset (0 for an empty ledger). */
  async ledgerEnd(options?: CallOptions): Promise<number> {
    const res = await this.#object<{ offset?: unknown }>('GET', '/v2/state/ledger-end', options);
    const offset = res.offset ?? 0;
    if (typeof offset !== 'number') {
      throw badShape('GET /v2/state/ledger-end', 'offset is not a number');
    }
    return offset;
  }

  latestPrunedOffsets(options?: CallOptions): Promise<GetLatestPrunedOffsetsResponse> {
    return this.#object('GET', '/v2/state/latest-pruned-offsets', options);
  }

  connectedSynchronizers(
    query: ConnectedSynchronizersQuery = {},
    options?: CallOptions,
  ): Promise<GetConnectedSynchronizersResponse> {
    return this.#object('GET', '/v2/state/connected-synchronizers', options, {
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
    return this.#list('/v2/state/active-contracts', options, {
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
    return this.#object('POST', '/v2/state/active-contracts-page', options, { body: req });
  }

  // ---- updates ----

  /** Updates after `beginExclusive`, at most `limit` of them. */
  listUpdates(req: ListUpdatesRequest, options?: ListOptions): Promise<JsGetUpdatesResponse[]> {
    return this.#list('/v2/updates', options, {
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
    return this.#object('POST', '/v2/updates/get-updates-page', options, { body: req });
  }

  updateById(req: GetUpdateByIdRequest, options?: CallOptions): Promise<JsGetUpdateResponse> {
    return this.#object('POST', '/v2/updates/update-by-id', options, { body: req });
  }

  updateByOffset(
    req: GetUpdateByOffsetRequest,
    options?: CallOptions,
  ): Promise<JsGetUpdateResponse> {
    return this.#object('POST', '/v2/updates/update-by-offset', options, { body: req });
  }

  eventsByContractId(
    req: GetEventsByContractIdRequest,
    options?: CallOptions,
  ): Promise<JsGetEventsByContractIdResponse> {
    return this.#object('POST', '/v2/events/events-by-contract-id', options, { body: req });
  }

  /** @deprecated since Canton 3.5; use `updateById`. */
  async transactionById(
    req: TransactionByIdRequest,
    options?: CallOptions,
  ): Promise<JsGetTransactionResponse> {
    const parties = req.requestingParties;
    const format = req.transactionFormat;
    if ((parties === undefined) === (format === undefined)) {
      throw new LedgerUsageError(
        'transactionById takes requestingParties or transactionFormat, exactly one of them.',
      );
    }
    if (parties !== undefined && parties.length === 0) {
      throw new LedgerUsageError('transactionById needs at least one requesting party.');
    }
    const body =
      parties === undefined
        ? { updateId: req.updateId, transactionFormat: format }
        : { updateId: req.updateId, requestingParties: [...parties] };
    return await this.#object('POST', '/v2/updates/transaction-by-id', options, { body });
  }

  // ---- commands ----

  /** Asynchronous submission; the outcome arrives as a completion. */
  submit(commands: JsCommands, options?: CallOptions): Promise<SubmitResponse> {
    return this.#object('POST', '/v2/commands/async/submit', options, { body: commands });
  }

  submitAndWait(commands: JsCommands, options?: CallOptions): Promise<SubmitAndWaitResponse> {
    return this.#object('POST', '/v2/commands/submit-and-wait', options, { body: commands });
  }

  /** Without a format the node uses ACS_DELTA with wildcards for all actAs and readAs parties. */
  submitAndWaitForTransaction(
    commands: JsCommands,
    transactionFormat?: TransactionFormat,
    options?: CallOptions,
  ): Promise<JsSubmitAndWaitForTransactionResponse> {
    return this.#object('POST', '/v2/commands/submit-and-wait-for-transaction', options, {
      body: transactionFormat === undefined ? { commands } : { commands, transactionFormat },
    });
  }

  /** Completions after `beginExclusive` (the node answers once the stream is idle). */
  listCompletions(
    req: CompletionStreamRequest,
    options?: ListOptions,
  ): Promise<CompletionStreamResponse[]> {
    return this.#list('/v2/commands/completions', options, req);
  }

  /** 3.5 only: completions without a userId filter. */
  listCommandCompletions(
    req: GetCompletionsRequest,
    options?: ListOptions,
  ): Promise<CompletionStreamResponse[]> {
    return this.#list('/v2/commands/command-completions', options, req);
  }

  // ---- parties ----

  allocateParty(req: AllocatePartyRequest, options?: CallOptions): Promise<AllocatePartyResponse> {
    return this.#object('POST', '/v2/parties', options, { body: req });
  }

  listParties(
    query: ListPartiesQuery = {},
    options?: CallOptions,
  ): Promise<ListKnownPartiesResponse> {
    return this.#object('GET', '/v2/parties', options, {
      query: {
        'identity-provider-id': query.identityProviderId,
        'filter-party': query.filterParty,
        pageSize: query.pageSize,
        pageToken: query.pageToken,
      },
    });
  }

  /** Details of `party` and of `more`; unknown parties are left out of the answer. */
  async getParties(
    party: string,
    more: readonly string[] = [],
    options?: CallOptions & IdentityProviderOption,
  ): Promise<GetPartiesResponse> {
    return await this.#object('GET', `/v2/parties/${segment(party)}`, options, {
      query: {
        parties: more.length === 0 ? undefined : more,
        'identity-provider-id': options?.identityProviderId,
      },
    });
  }

  async participantId(options?: CallOptions): Promise<string> {
    const res = await this.#object<{ participantId?: unknown }>(
      'GET',
      '/v2/parties/participant-id',
      options,
    );
    if (typeof res.participantId !== 'string') {
      throw badShape('GET /v2/parties/participant-id', 'participantId is not a string');
    }
    return res.participantId;
  }

  // ---- users ----

  createUser(req: CreateUserRequest, options?: CallOptions): Promise<CreateUserResponse> {
    return this.#object('POST', '/v2/users', options, { body: req });
  }

  async getUser(
    userId: string,
    options?: CallOptions & IdentityProviderOption,
  ): Promise<GetUserResponse> {
    return await this.#object('GET', `/v2/users/${segment(userId)}`, options, {
      query: { 'identity-provider-id': options?.identityProviderId },
    });
  }

  async deleteUser(userId: string, options?: CallOptions): Promise<void> {
    await this.#object('DELETE', `/v2/users/${segment(userId)}`, options);
  }

  listUsers(query: ListUsersQuery = {}, options?: CallOptions): Promise<ListUsersResponse> {
    return this.#object('GET', '/v2/users', options, {
      query: { pageSize: query.pageSize, pageToken: query.pageToken },
    });
  }

  async grantRights(
    userId: string,
    rights: readonly Right[],
    options?: CallOptions & IdentityProviderOption,
  ): Promise<GrantUserRightsResponse> {
    return await this.#object('POST', `/v2/users/${segment(userId)}/rights`, options, {
      body: rightsBody(userId, rights, options),
    });
  }

  async listRights(userId: string, options?: CallOptions): Promise<ListUserRightsResponse> {
    return await this.#object('GET', `/v2/users/${segment(userId)}/rights`, options);
  }

  async revokeRights(
    userId: string,
    rights: readonly Right[],
    options?: CallOptions & IdentityProviderOption,
  ): Promise<RevokeUserRightsResponse> {
    return await this.#object('PATCH', `/v2/users/${segment(userId)}/rights`, options, {
      body: rightsBody(userId, rights, options),
    });
  }

  /** The user the token belongs to. */
  authenticatedUser(options?: CallOptions & IdentityProviderOption): Promise<GetUserResponse> {
    return this.#object('GET', '/v2/authenticated-user', options, {
      query: { 'identity-provider-id': options?.identityProviderId },
    });
  }

  // ---- packages, version, health ----

  async listPackages(options?: CallOptions): Promise<string[]> {
    const res = await this.#object<{ packageIds?: unknown }>('GET', '/v2/packages', options);
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
    return this.#object('GET', '/v2/version', options);
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

  // ---- plumbing ----

  async #object<T extends object>(
    method: HttpMethod,
    path: string,
    options: CallOptions | undefined,
    extra: Pick<HttpRequestOptions, 'query' | 'body'> = {},
  ): Promise<T> {
    const body = await this.transport.request(method, path, { ...callOptions(options), ...extra });
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw badShape(`${method} ${path}`, 'expected a JSON object');
    }
    return body as T;
  }

  async #list<T>(path: string, options: ListOptions | undefined, body: unknown): Promise<T[]> {
    const limit = options?.limit ?? MAX_LIST_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
      throw new LedgerUsageError(
        `limit must be an integer from 1 to ${MAX_LIST_LIMIT} (the node answers 413 above its ` +
          `list limit); got ${limit}. Page with the last offset instead.`,
      );
    }
    const res = await this.transport.request('POST', path, {
      ...callOptions(options),
      query: { limit, stream_idle_timeout_ms: options?.streamIdleTimeoutMs },
      body,
    });
    if (!Array.isArray(res)) throw badShape(`POST ${path}`, 'expected a JSON array');
    return res as T[];
  }
}

function callOptions(options: CallOptions | undefined): CallOptions {
  return {
    ...(options?.signal === undefined ? {} : { signal: options.signal }),
    ...(options?.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  };
}

function segment(value: string): string {
  if (value === '') throw new LedgerUsageError('A path parameter must not be empty.');
  return encodeURIComponent(value);
}

function rightsBody(
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

function badShape(request: string, problem: string): LedgerTransportError {
  return new LedgerTransportError(
    'bad-response',
    request,
    `${request} answered JSON of an unexpected shape (${problem}); is this a Canton JSON Ledger API v2?`,
  );
}
