import type { Dispatcher } from 'undici';
import { Agent } from './undici-agent.js';
import { throwIfAborted } from '../core/abort-error.js';
import { IllegalStateError } from '../core/illegal-state-error.js';
import { readAnswer, readBytesAnswer } from './http-answer.js';
import type { LedgerConnectionOptions } from './ledger-connection.js';
import { LedgerTransportError } from './ledger-transport-error.js';
import { linkToCaller } from './link-to-caller.js';
import { loadTlsMaterial, type TlsMaterial } from './load-tls-material.js';
import { mapTransportFailure, NetworkFailure } from './map-transport-failure.js';
import { BodyTooLarge, MAX_BYTES_ANSWER, readCappedBody } from './read-capped-body.js';
import { resolveConnection, type ResolvedLedgerConnection } from './resolve-connection.js';

// Where the transport's users looked for it before the TLS files moved to their own module.
export type { TlsMaterial } from './load-tls-material.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type QueryValue = string | number | boolean | readonly (string | number)[] | undefined;

/** The per-call options every client method accepts as its last argument. */
export type CallOptions = {
  readonly signal?: AbortSignal;
  /** Overrides the connection's `requestTimeoutMs` for this call. */
  readonly timeoutMs?: number;
};

export type HttpRequestOptions = CallOptions & {
  /** Undefined values are left out; arrays repeat the key (`parties=a&parties=b`). */
  readonly query?: Readonly<Record<string, QueryValue>>;
  /** Sent as JSON when defined. */
  readonly body?: unknown;
  /**
   * How to read a successful answer (default `json`); `bytes` gives a Uint8Array of an
   * `application/octet-stream` answer (error answers are still read as JSON or text).
   */
  readonly accept?: 'json' | 'text' | 'bytes';
  /**
   * `accept: 'bytes'` only: a larger body is refused (a `bad-response`) once this many bytes have
   * arrived, before the rest is read. Default `MAX_BYTES_ANSWER`.
   */
  readonly maxBytes?: number;
  /**
   * Non-2xx statuses that are answers rather than errors for this call (readyz's 503), returned
   * as read. Only consulted when the body is not a JsCantonError.
   */
  readonly okStatuses?: readonly number[];
};

export type HttpResponse = {
  readonly status: number;
  /** Parsed JSON for `accept: 'json'`, a Uint8Array for `bytes`, the text otherwise. */
  readonly body: unknown;
  /** The answer's headers, names in lower case. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
};

export interface HttpTransport {
  readonly connection: ResolvedLedgerConnection;
  /** The answer's body: parsed JSON, or text with `accept: 'text'`. */
  request(method: HttpMethod, path: string, options?: HttpRequestOptions): Promise<unknown>;
  /** Like `request`, with the status (for calls with `okStatuses`). */
  exchange(method: HttpMethod, path: string, options?: HttpRequestOptions): Promise<HttpResponse>;
  /** Closes the pooled connections (not a dispatcher the caller passed in). Idempotent. */
  close(): Promise<void>;
}

/**
 * Builds the one HTTP path of the client: a keep-alive undici Agent (or the given dispatcher),
 * TLS from files, bearer tokens with one retry after a 401, per-call timeouts, and the mapping of
 * every failure to LedgerApiError / LedgerTransportError / AbortError. The TLS files are read
 * unless `material` passes them already loaded (by a caller that shares them with the streams).
 */
export async function createHttpTransport(
  options: LedgerConnectionOptions,
  material?: TlsMaterial,
): Promise<HttpTransport> {
  const connection = resolveConnection(options);
  if (options.dispatcher !== undefined) {
    return new UndiciHttpTransport(connection, options.dispatcher, false);
  }
  const tls =
    material ?? (connection.tls === undefined ? undefined : await loadTlsMaterial(connection.tls));
  const agent = new Agent({
    keepAliveTimeout: 30_000,
    connections: 32,
    ...(tls === undefined ? {} : { connect: { ...tls } }),
  });
  return new UndiciHttpTransport(connection, agent, true);
}

class UndiciHttpTransport implements HttpTransport {
  readonly connection: ResolvedLedgerConnection;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #origin: string;
  readonly #prefix: string;
  #closing: Promise<void> | undefined;

  constructor(connection: ResolvedLedgerConnection, dispatcher: Dispatcher, owns: boolean) {
    this.connection = connection;
    this.#dispatcher = dispatcher;
    this.#ownsDispatcher = owns;
    const url = new URL(connection.url);
    this.#origin = url.origin;
    this.#prefix = url.pathname.replace(/\/+$/, '');
  }

  async request(method: HttpMethod, path: string, options?: HttpRequestOptions): Promise<unknown> {
    return (await this.exchange(method, path, options)).body;
  }

  async exchange(
    method: HttpMethod,
    path: string,
    options: HttpRequestOptions = {},
  ): Promise<HttpResponse> {
    const what = `${method} ${path}`;
    if (this.#closing !== undefined) {
      throw new IllegalStateError(`${what}: the ledger client is closed.`);
    }
    throwIfAborted(options.signal);
    const { clock, logger } = this.connection;
    const timeoutMs = options.timeoutMs ?? this.connection.requestTimeoutMs;
    // One controller for the timeout and the caller's signal. AbortSignal.any registers a
    // derived signal with the caller's signal, which for the bot lives as long as the process;
    // it showed in the submit path's profile. `linkToCaller` holds nothing once the request is over.
    const controller = new AbortController();
    const signal = controller.signal;
    let timedOut = false;
    const handle = clock.setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const unlink =
      options.signal === undefined ? undefined : linkToCaller(options.signal, controller);
    const started = clock.now();
    try {
      const answer = await this.#attempts(method, path, options, signal);
      logger.debug(
        { method, path, status: answer.status, ms: clock.now() - started },
        'ledger call',
      );
      return answer;
    } catch (err) {
      const mapped = mapTransportFailure(err, what, timeoutMs, timedOut, options.signal);
      logger.debug(
        { method, path, code: (mapped as { code?: unknown }).code, ms: clock.now() - started },
        'ledger call failed',
      );
      throw mapped;
    } finally {
      clock.clearTimeout(handle);
      unlink?.();
    }
  }

  async #attempts(
    method: HttpMethod,
    path: string,
    options: HttpRequestOptions,
    signal: AbortSignal,
  ): Promise<HttpResponse> {
    const auth = this.connection.auth;
    const fullPath = this.#prefix + path + queryString(options.query);
    const accept = options.accept ?? 'json';
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const tokens: string[] = [];
    for (let attempt = 1; ; attempt++) {
      const token = auth === undefined ? undefined : await auth.token(signal);
      if (token !== undefined && token !== '') tokens.push(token);
      const headers: Record<string, string> = {
        accept: accept === 'json' ? 'application/json' : '*/*',
      };
      if (token !== undefined) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      let status: number;
      let resHeaders: Record<string, string | string[] | undefined>;
      let text: string | Uint8Array;
      try {
        const res = await this.#dispatcher.request({
          origin: this.#origin,
          path: fullPath,
          method,
          headers,
          ...(body === undefined ? {} : { body }),
          signal,
        });
        status = res.statusCode;
        resHeaders = res.headers;
        text =
          accept === 'bytes'
            ? await readCappedBody(res.body, options.maxBytes ?? MAX_BYTES_ANSWER)
            : await res.body.text();
      } catch (err) {
        if (err instanceof BodyTooLarge) {
          throw new LedgerTransportError(
            'bad-response',
            `${method} ${path}`,
            `${method} ${path} answered more than ${err.limit} bytes; refused before reading the rest.`,
          );
        }
        throw new NetworkFailure(err);
      }
      // An unauthenticated request was not processed, so repeating it once is safe.
      if (status === 401 && auth !== undefined) {
        auth.invalidate();
        if (attempt === 1) continue;
      }
      const scrub = (s: string): string =>
        tokens.reduce((acc, t) => acc.split(t).join('[redacted]'), s);
      const what = `${method} ${path}`;
      const answer =
        typeof text === 'string'
          ? readAnswer(what, status, resHeaders, text, options, scrub)
          : readBytesAnswer(what, status, resHeaders, text, options, scrub);
      return { ...answer, headers: resHeaders };
    }
  }

  close(): Promise<void> {
    this.#closing ??= this.#ownsDispatcher ? this.#dispatcher.close() : Promise.resolve();
    return this.#closing;
  }
}

function queryString(query: HttpRequestOptions['query']): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      for (const v of value as readonly (string | number)[]) params.append(key, String(v));
    } else {
      params.append(key, String(value));
    }
  }
  const s = params.toString();
  return s === '' ? '' : `?${s}`;
}
