import type { ActiveContractsOptions, ActiveContractsRequest } from '../ledger/active-contracts.js';
import type { CallOptions } from '../ledger/http-transport.js';
import type { ListOptions } from '../ledger/ledger-client.js';
import type {
  CompletionElement,
  StreamCompletionsRequest,
} from '../ledger/ws/completion-stream.js';
import type { StreamOptions } from '../ledger/ws/stream-context.js';
import type { StreamUpdatesRequest, UpdateElement } from '../ledger/ws/update-stream.js';
import type {
  CompletionStreamRequest,
  CompletionStreamResponse,
  GetEventsByContractIdRequest,
  GetLatestPrunedOffsetsResponse,
  GetUpdateByOffsetRequest,
  JsCommands,
  JsGetActiveContractsResponse,
  JsGetEventsByContractIdResponse,
  JsGetUpdateResponse,
} from '../ledger/wire/wire-types.js';

/**
 * What the runtime uses of the ledger: a structural subset of LedgerClient (which production
 * passes as it is). The streams must resume across dropped sockets by themselves, as the
 * client's do; tests pass a scripted fake.
 */
export type BotLedger = {
  submit(commands: JsCommands, options?: CallOptions): Promise<unknown>;
  ledgerEnd(options?: CallOptions): Promise<number>;
  updates(request: StreamUpdatesRequest, options?: StreamOptions): AsyncIterable<UpdateElement>;
  completions(
    request: StreamCompletionsRequest,
    options?: StreamOptions,
  ): AsyncIterable<CompletionElement>;
  eventsByContractId(
    request: GetEventsByContractIdRequest,
    options?: CallOptions,
  ): Promise<JsGetEventsByContractIdResponse>;
  /**
   * After a contention error: the transaction that archived a contract the intent needs, to see
   * whether it carries the intent's own commandId (an earlier attempt committed).
   */
  updateByOffset(
    request: GetUpdateByOffsetRequest,
    options?: CallOptions,
  ): Promise<JsGetUpdateResponse>;
  /**
   * After a contention error on a command with no archived input to look at (a keyed create
   * refused as DUPLICATE_CONTRACT_KEY): the user's completions after the intent's offset, in
   * pages, to find a success of its commandId.
   */
  listCompletions(
    request: CompletionStreamRequest,
    options?: ListOptions,
  ): Promise<CompletionStreamResponse[]>;
  /** After a PARTICIPANT_PRUNED_DATA_ACCESSED: how far the participant pruned. */
  latestPrunedOffsets(options?: CallOptions): Promise<GetLatestPrunedOffsetsResponse>;
  /** After a PARTICIPANT_PRUNED_DATA_ACCESSED: the contracts created in the pruned range. */
  activeContracts(
    request: ActiveContractsRequest,
    options?: ActiveContractsOptions,
  ): AsyncIterable<JsGetActiveContractsResponse>;
};
