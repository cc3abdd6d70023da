import type {
  CallOptions,
  HttpMethod,
  HttpRequestOptions,
  HttpTransport,
} from './http-transport.js';
import { LedgerTransportError } from './ledger-transport-error.js';
import { LedgerUsageError } from './ledger-usage-error.js';

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
 * The client's two kinds of call over the transport, each answer's shape checked: a JSON object,
 * or a bounded list (`?limit=`, never above MAX_LIST_LIMIT). Apart from LedgerClient, which has
 * one method per endpoint and no room for the plumbing.
 */
export class JsonCalls {
  readonly #transport: HttpTransport;

  constructor(transport: HttpTransport) {
    this.#transport = transport;
  }

  async object<T extends object>(
    method: HttpMethod,
    path: string,
    options: CallOptions | undefined,
    extra: Pick<HttpRequestOptions, 'query' | 'body'> = {},
  ): Promise<T> {
    const body = await this.#transport.request(method, path, { ...callOptions(options), ...extra });
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw badShape(`${method} ${path}`, 'expected a JSON object');
    }
    return body as T;
  }

  async list<T>(path: string, options: ListOptions | undefined, body: unknown): Promise<T[]> {
    const limit = options?.limit ?? MAX_LIST_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
      throw new LedgerUsageError(
        `limit must be an integer from 1 to ${MAX_LIST_LIMIT} (the node answers 413 above its ` +
          `list limit); got ${limit}. Page with the last offset instead.`,
      );
    }
    const res = await this.#transport.request('POST', path, {
      ...callOptions(options),
      query: { limit, stream_idle_timeout_ms: options?.streamIdleTimeoutMs },
      body,
    });
    if (!Array.isArray(res)) throw badShape(`POST ${path}`, 'expected a JSON array');
    return res as T[];
  }
}

/** The signal and timeout of `options`, and nothing else of them. */
export function callOptions(options: CallOptions | undefined): CallOptions {
  return {
    ...(options?.signal === undefined ? {} : { signal: options.signal }),
    ...(options?.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  };
}

/** One path segment, encoded; an empty one would change the path. */
export function segment(value: string): string {
  if (value === '') throw new LedgerUsageError('A path parameter must not be empty.');
  return encodeURIComponent(value);
}

/** A 2xx answer that is not what the endpoint answers: the URL is likely not a JSON API v2. */
export function badShape(request: string, problem: string): LedgerTransportError {
  return new LedgerTransportError(
    'bad-response',
    request,
    `${request} answered JSON of an unexpected shape (${problem}); is this a Canton JSON Ledger API v2?`,
  );
}
