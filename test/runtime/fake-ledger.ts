import { AbortError } from '../../src/core/abort-error.js';
import type { CallOptions } from '../../src/ledger/http-transport.js';
import type { ListOptions } from '../../src/ledger/ledger-client.js';
import { LedgerApiError } from '../../src/ledger/ledger-api-error.js';
import { parseJsCantonError } from '../../src/ledger/js-canton-error.js';
import type {
  CompletionElement,
  StreamCompletionsRequest,
} from '../../src/ledger/ws/completion-stream.js';
import type { StreamOptions } from '../../src/ledger/ws/stream-context.js';
import type { StreamUpdatesRequest, UpdateElement } from '../../src/ledger/ws/update-stream.js';
import type {
  ActiveContractsOptions,
  ActiveContractsRequest,
} from '../../src/ledger/active-contracts.js';
import type {
  Completion,
  CompletionStreamRequest,
  CompletionStreamResponse,
  GetEventsByContractIdRequest,
  GetLatestPrunedOffsetsResponse,
  GetUpdateByOffsetRequest,
  JsCommands,
  JsGetActiveContractsResponse,
  JsGetEventsByContractIdResponse,
  JsGetUpdateResponse,
} from '../../src/ledger/wire/wire-types.js';
import type { BotLedger } from '../../src/runtime/bot-ledger.js';
import { cantonError } from '../ledger/samples.js';
import { specValidator } from '../support/spec-validator.js';

const openapi = specValidator('openapi-3.5');

/**
 * An async iterable fed by the test. It counts how many elements the consumer has pulled, so a
 * test can prove that ingestion paused (nothing was read beyond the bound).
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #waiting: ((r: IteratorResult<T>) => void) | undefined;
  #failWaiting: ((err: unknown) => void) | undefined;
  #ended = false;
  #error: Error | undefined = undefined;
  pulled = 0;

  constructor(readonly signal?: AbortSignal) {
    signal?.addEventListener('abort', () => this.fail(new AbortError()), { once: true });
  }

  push(...items: T[]): void {
    for (const item of items) {
      if (this.#waiting !== undefined) {
        const w = this.#waiting;
        this.#waiting = undefined;
        this.#failWaiting = undefined;
        this.pulled += 1;
        w({ value: item, done: false });
      } else {
        this.#items.push(item);
      }
    }
  }

  /** Elements pushed but not yet pulled. */
  get buffered(): number {
    return this.#items.length;
  }

  end(): void {
    this.#ended = true;
    this.#waiting?.({ value: undefined, done: true });
    this.#waiting = undefined;
  }

  fail(err: unknown): void {
    this.#error = err as Error;
    this.#failWaiting?.(err);
    this.#waiting = undefined;
    this.#failWaiting = undefined;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.#error !== undefined) return Promise.reject(this.#error);
        const item = this.#items.shift();
        if (item !== undefined) {
          this.pulled += 1;
          return Promise.resolve({ value: item, done: false });
        }
        if (this.#ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => {
          this.#waiting = resolve;
          this.#failWaiting = reject;
        });
      },
      return: () => {
        this.#ended = true;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

export type SubmitHandler = (commands: JsCommands, n: number) => unknown;

/**
 * A scripted participant: records every submission (validated against the 3.5 spec), answers
 * them with the next scripted handler (accept by default), and exposes the update and completion
 * streams the bot opened as queues the test feeds.
 */
export class FakeLedger implements BotLedger {
  readonly submits: JsCommands[] = [];
  readonly submitScript: SubmitHandler[] = [];
  readonly updateStreams: { request: StreamUpdatesRequest; queue: AsyncQueue<UpdateElement> }[] =
    [];
  readonly completionStreams: {
    request: StreamCompletionsRequest;
    queue: AsyncQueue<CompletionElement>;
  }[] = [];
  readonly lookups: GetEventsByContractIdRequest[] = [];
  /** Contract id → 'active' | 'archived' | 'unknown' for eventsByContractId. */
  readonly contracts = new Map<string, 'active' | 'archived' | 'unknown'>();
  /**
   * Contract id → the transaction that archived it (offset, and the commandId a submitter sees).
   * An archived contract without an entry was archived at offset 2 by another party's command
   * (its transaction shows no commandId to us).
   */
  readonly archivedBy = new Map<string, { offset: number; commandId: string; updateId?: string }>();
  /** Errors the next eventsByContractId / updateByOffset calls throw (one per call). */
  readonly lookupErrors: Error[] = [];
  readonly updateLookups: GetUpdateByOffsetRequest[] = [];
  /** While set, eventsByContractId waits for it (to act while a lookup is out). */
  lookupGate: Promise<void> | undefined;
  /** Canton's wire form: `"archived": null` for an active contract (instead of leaving it out). */
  nullForAbsent = false;
  /** Errors the next `updates` calls throw when iterated (one per call). */
  readonly updatesErrors: unknown[] = [];
  end = 0;
  /** What `latestPrunedOffsets` reports. */
  prunedUpTo = 0;
  /** The active contract set `activeContracts` answers with (whatever the offset). */
  activeSet: JsGetActiveContractsResponse[] = [];
  readonly acsRequests: ActiveContractsRequest[] = [];

  // eslint-disable-next-line @typescript-eslint/require-await -- handlers throw synchronously
  async submit(commands: JsCommands, _options?: CallOptions): Promise<unknown> {
    openapi.assert('JsCommands', commands);
    const n = this.submits.length;
    this.submits.push(structuredClone(commands));
    const handler = this.submitScript.shift();
    return handler === undefined ? {} : handler(commands, n);
  }

  ledgerEnd(): Promise<number> {
    return Promise.resolve(this.end);
  }

  updates(request: StreamUpdatesRequest, options?: StreamOptions): AsyncIterable<UpdateElement> {
    openapi.assert('UpdateFormat', request.updateFormat);
    const queue = new AsyncQueue<UpdateElement>(options?.signal);
    const err = this.updatesErrors.shift();
    if (err !== undefined) queue.fail(err);
    this.updateStreams.push({ request, queue });
    return queue;
  }

  completions(
    request: StreamCompletionsRequest,
    options?: StreamOptions,
  ): AsyncIterable<CompletionElement> {
    const queue = new AsyncQueue<CompletionElement>(options?.signal);
    this.completionStreams.push({ request, queue });
    return queue;
  }

  async eventsByContractId(
    request: GetEventsByContractIdRequest,
  ): Promise<JsGetEventsByContractIdResponse> {
    openapi.assert('GetEventsByContractIdRequest', request);
    this.lookups.push(request);
    if (this.lookupGate !== undefined) await this.lookupGate;
    const failure = this.lookupErrors.shift();
    if (failure !== undefined) throw failure;
    const state = this.contracts.get(request.contractId) ?? 'unknown';
    if (state === 'unknown') {
      return Promise.reject(
        apiError('CONTRACT_EVENTS_NOT_FOUND', 11, 5, 'Contract events not found, or not visible.'),
      );
    }
    const created = {
      createdEvent: {
        offset: 1,
        nodeId: 0,
        contractId: request.contractId,
        templateId: 'pkg:Invoice:Invoice',
        createArgument: {},
        witnessParties: [],
        signatories: [],
        observers: [],
        createdAt: '2026-01-01T00:00:00Z',
        packageName: 'invoices',
        representativePackageId: 'pkg',
        acsDelta: true,
      },
      synchronizerId: 'sync::1220',
    };
    const res =
      state === 'active'
        ? { created, ...(this.nullForAbsent ? { archived: null } : {}) }
        : {
            created,
            archived: {
              archivedEvent: {
                offset: this.archivedBy.get(request.contractId)?.offset ?? 2,
                nodeId: 0,
                contractId: request.contractId,
                templateId: 'pkg:Invoice:Invoice',
                witnessParties: [],
                packageName: 'invoices',
              },
              synchronizerId: 'sync::1220',
            },
          };
    return Promise.resolve(res as JsGetEventsByContractIdResponse);
  }

  /** The archiving transaction of `archivedBy`, as Canton shows it to a submitting party. */
  updateByOffset(request: GetUpdateByOffsetRequest): Promise<JsGetUpdateResponse> {
    openapi.assert('GetUpdateByOffsetRequest', request);
    this.updateLookups.push(request);
    const failure = this.lookupErrors.shift();
    if (failure !== undefined) return Promise.reject(failure);
    let found: [string, { offset: number; commandId?: string; updateId?: string }] | undefined = [
      ...this.archivedBy.entries(),
    ].find(([, a]) => a.offset === request.offset);
    if (found === undefined && request.offset === 2) {
      // The default archive: another party's command, so no commandId for us.
      const cid = [...this.contracts].find(
        ([c, st]) => st === 'archived' && !this.archivedBy.has(c),
      );
      if (cid !== undefined) found = [cid[0], { offset: 2 }];
    }
    if (found === undefined) {
      return Promise.reject(
        apiError('UPDATE_NOT_FOUND', 11, 5, 'Update not found, or not visible.', {}, 404),
      );
    }
    const [contractId, a] = found;
    const res = {
      update: {
        Transaction: {
          value: {
            updateId: a.updateId ?? `tx-${a.offset}`,
            ...(a.commandId === undefined ? {} : { commandId: a.commandId }),
            workflowId: '',
            effectiveAt: '2026-01-05T09:00:00Z',
            events: [
              {
                ArchivedEvent: {
                  offset: a.offset,
                  nodeId: 0,
                  contractId,
                  templateId: 'pkg:Invoice:Invoice',
                  witnessParties: [],
                  packageName: 'invoices',
                },
              },
            ],
            offset: a.offset,
            synchronizerId: 'sync::1220',
            recordTime: '2026-01-05T09:00:00Z',
            ...(this.nullForAbsent ? { traceContext: null, externalTransactionHash: null } : {}),
          },
        },
      },
    };
    if (!this.nullForAbsent) openapi.assert('JsGetUpdateResponse', res);
    return Promise.resolve(res as unknown as JsGetUpdateResponse);
  }

  /**
   * The user's completions, as `listCompletions` pages through them: every entry after
   * `beginExclusive`, at most `limit`. Entries are `completion(...)` elements of the test.
   */
  readonly completionLog: { offset: number; completion: Completion }[] = [];
  readonly completionListRequests: { request: CompletionStreamRequest; limit?: number }[] = [];
  /** Errors the next listCompletions calls throw (one per call). */
  readonly completionListErrors: Error[] = [];

  listCompletions(
    request: CompletionStreamRequest,
    options?: ListOptions,
  ): Promise<CompletionStreamResponse[]> {
    openapi.assert('CompletionStreamRequest', request);
    this.completionListRequests.push({
      request,
      ...(options?.limit === undefined ? {} : { limit: options.limit }),
    });
    const failure = this.completionListErrors.shift();
    if (failure !== undefined) return Promise.reject(failure);
    const begin = request.beginExclusive ?? 0;
    if (begin < this.prunedUpTo) {
      // As the sandbox and Canton refuse a completions read that starts before the pruning point.
      return Promise.reject(
        apiError(
          'PARTICIPANT_PRUNED_DATA_ACCESSED',
          9,
          9,
          `begin_exclusive (${begin}) is before the pruning offset (${this.prunedUpTo})`,
          { earliest_offset: String(this.prunedUpTo) },
        ),
      );
    }
    const page = this.completionLog
      .filter((c) => c.offset > begin)
      .sort((a, b) => a.offset - b.offset)
      .slice(0, options?.limit ?? 200)
      .map((c) => ({ completionResponse: { Completion: { value: c.completion } } }));
    for (const r of page) openapi.assert('CompletionStreamResponse', r);
    return Promise.resolve(page);
  }

  /** When set, latestPrunedOffsets fails with it. */
  prunedOffsetsError: Error | undefined;

  latestPrunedOffsets(): Promise<GetLatestPrunedOffsetsResponse> {
    if (this.prunedOffsetsError !== undefined) return Promise.reject(this.prunedOffsetsError);
    const res = {
      participantPrunedUpToInclusive: this.prunedUpTo,
      allDivulgedContractsPrunedUpToInclusive: this.prunedUpTo,
    };
    openapi.assert('GetLatestPrunedOffsetsResponse', res);
    return Promise.resolve(res);
  }

  async *activeContracts(
    request: ActiveContractsRequest,
    _options?: ActiveContractsOptions,
  ): AsyncGenerator<JsGetActiveContractsResponse> {
    openapi.assert('EventFormat', request.eventFormat);
    this.acsRequests.push(request);
    await Promise.resolve();
    for (const element of this.activeSet) {
      openapi.assert('JsGetActiveContractsResponse', element);
      yield element;
    }
  }

  /** The latest completions stream (the bot opens one). */
  get completionQueue(): AsyncQueue<CompletionElement> {
    const last = this.completionStreams[this.completionStreams.length - 1];
    if (last === undefined) throw new Error('the bot opened no completions stream');
    return last.queue;
  }

  get updateQueue(): AsyncQueue<UpdateElement> {
    const last = this.updateStreams[this.updateStreams.length - 1];
    if (last === undefined) throw new Error('the bot opened no updates stream');
    return last.queue;
  }
}

/** A synchronous rejection as the HTTP client throws it. */
export function apiError(
  code: string,
  category: number,
  grpc: number,
  cause: string,
  context: Record<string, string> = {},
  status = 400,
): LedgerApiError {
  const body = cantonError(code, category, grpc, cause, context);
  openapi.assert('JsCantonError', body);
  return new LedgerApiError(parseJsCantonError(body)!, 'POST /v2/commands/async/submit', status);
}
