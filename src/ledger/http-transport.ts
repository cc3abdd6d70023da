import { readFile } from 'node:fs/promises';
import { Agent, type Dispatcher } from 'undici';
import { AbortError, throwIfAborted } from '../core/abort-error.js';
import { systemClock, type Clock } from '../core/clock.js';
import { IllegalStateError } from '../core/illegal-state-error.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { systemRandom, type Random } from '../core/random.js';
import type { AuthProvider } from './auth/auth-provider.js';
import { readAnswer, readBytesAnswer } from './http-answer.js';
import { BodyTooLarge, MAX_BYTES_ANSWER, readCappedBody } from './read-capped-body.js';
import { LedgerApiError } from './ledger-api-error.js';
import type { LedgerConnectionOptions, TlsOptions } from './ledger-connection.js';
import { LedgerTransportError, type TransportFailure } from './ledger-transport-error.js';
import { parseHttpUrl } from './parse-http-url.js';
import { LedgerUsageError } from './ledger-usage-error.js';

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

/** The connection settings with defaults filled in. Holds no token or key material. */
export type ResolvedLedgerConnection = {
  /** Base URL without a trailing slash. */
  readonly url: string;
  readonly auth: AuthProvider | undefined;
  readonly tls: TlsOptions | undefined;
  readonly requestTimeoutMs: number;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
};

/** The PEM material of `TlsOptions`, read from disk. */
export type TlsMaterial = {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly rejectUnauthorized: boolean;
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

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** Reads the CA, certificate and key files once; shared by the HTTP client and the streams. */
export async function loadTlsMaterial(tls: TlsOptions): Promise<TlsMaterial> {
  const read = async (file: string | undefined, what: string): Promise<Buffer | undefined> => {
    if (file === undefined) return undefined;
    try {
      return await readFile(file);
    } catch (err) {
      throw new LedgerUsageError(
        `Cannot read the TLS ${what} file ${file}: check the tls settings of the ledger connection.`,
        { cause: err },
      );
    }
  };
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) {
    throw new LedgerUsageError(
      'TLS certFile and keyFile go together: set both for mutual TLS, or neither.',
    );
  }
  const [ca, cert, key] = await Promise.all([
    read(tls.caFile, 'CA'),
    read(tls.certFile, 'certificate'),
    read(tls.keyFile, 'key'),
  ]);
  return {
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    rejectUnauthorized: tls.rejectUnauthorized ?? true,
  };
}

export function resolveConnection(options: LedgerConnectionOptions): ResolvedLedgerConnection {
  const checked = parseHttpUrl(options.url);
  if (!checked.ok) {
    throw new LedgerUsageError(
      checked.problem === 'not-a-url'
        ? 'The ledger URL is not a valid URL; expected e.g. http://127.0.0.1:7575.'
        : `The ledger URL must start with http:// or https://, not ${checked.protocol}//.`,
    );
  }
  const parsed = checked.url;
  if (checked.hasCredentials) {
    // Credentials in a URL end up in logs; tokens go through an AuthProvider.
    throw new LedgerUsageError(
      'The ledger URL must not contain credentials; configure an auth provider instead.',
    );
  }
  const timeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (!Number.isFinite(timeout) || timeout <= 0) {
    throw new LedgerUsageError('requestTimeoutMs must be a positive number.');
  }
  const ping = options.pingIntervalMs;
  if (ping !== undefined && (!Number.isFinite(ping) || ping < 0)) {
    throw new LedgerUsageError('pingIntervalMs must be a number of ms, 0 or more (0: no pings).');
  }
  return Object.freeze({
    url: parsed.origin + parsed.pathname.replace(/\/+$/, ''),
    auth: options.auth,
    tls: options.tls,
    requestTimeoutMs: timeout,
    clock: options.clock ?? systemClock,
    random: options.random ?? systemRandom,
    logger: options.logger ?? silentLogger,
  });
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
      const mapped = mapFailure(err, what, timeoutMs, timedOut, options.signal);
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

const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'EPROTO',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
]);

const RESET_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Error codes along the cause chain and inside AggregateErrors (happy-eyeballs connects). */
function codesOf(err: unknown): string[] {
  const codes: string[] = [];
  const queue: unknown[] = [err];
  for (let i = 0; i < queue.length && i < 20; i++) {
    const e = queue[i];
    if (e === null || typeof e !== 'object') continue;
    const { code, cause, errors } = e as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string') codes.push(code);
    if (cause !== undefined) queue.push(cause);
    if (Array.isArray(errors)) queue.push(...(errors as unknown[]));
  }
  return codes;
}

function networkFailure(err: unknown): TransportFailure | undefined {
  const codes = codesOf(err);
  if (codes.some((c) => TIMEOUT_CODES.has(c))) return 'timeout';
  if (
    codes.some(
      (c) =>
        CONNECT_CODES.has(c) ||
        c.startsWith('ERR_TLS_') ||
        c.startsWith('ERR_SSL_') ||
        c.startsWith('CERT_'),
    )
  ) {
    return 'connect';
  }
  if (codes.some((c) => RESET_CODES.has(c))) return 'reset';
  return undefined;
}

const FAILURE_ADVICE: Record<TransportFailure, string> = {
  connect:
    'could not connect (nothing was sent); check the URL, that the participant runs, and TLS',
  reset: 'lost the connection mid-request; the outcome is unknown',
  timeout: 'got no answer in time; the outcome is unknown',
  'bad-response': 'got an unreadable answer',
  closed: 'the connection closed',
};

/** The requests in flight under each caller signal: one abort listener per signal, not per request. */
const linkedByCaller = new WeakMap<AbortSignal, Set<AbortController>>();

/**
 * Aborts `controller` when `caller` aborts; returns the unlink. A signal shared by many
 * concurrent requests (the bot's, with up to maxInFlight submits) gets a single listener, so
 * there is no listener per request to add and remove, and no MaxListenersExceededWarning.
 */
function linkToCaller(caller: AbortSignal, controller: AbortController): () => void {
  let linked = linkedByCaller.get(caller);
  if (linked === undefined) {
    const set = new Set<AbortController>();
    linked = set;
    linkedByCaller.set(caller, set);
    caller.addEventListener(
      'abort',
      () => {
        for (const c of set) c.abort(caller.reason);
        set.clear();
      },
      { once: true },
    );
  }
  const set = linked;
  set.add(controller);
  return () => set.delete(controller);
}

/** Marks an error raised by the network layer (undici), as opposed to the auth provider. */
class NetworkFailure extends Error {
  readonly error: unknown;
  constructor(error: unknown) {
    super('network failure', { cause: error });
    this.error = error;
  }
}

function mapFailure(
  err: unknown,
  what: string,
  timeoutMs: number,
  timedOut: boolean,
  callerSignal: AbortSignal | undefined,
): unknown {
  if (err instanceof LedgerApiError || err instanceof LedgerTransportError) return err;
  const cause = err instanceof NetworkFailure ? err.error : err;
  if (timedOut) {
    return new LedgerTransportError(
      'timeout',
      what,
      `${what}: no answer within ${timeoutMs} ms; the outcome is unknown.`,
      { cause },
    );
  }
  if (callerSignal?.aborted === true) {
    return new AbortError(`${what} was aborted`, { cause: callerSignal.reason });
  }
  // Errors of the auth provider keep their own type; it names what to fix.
  if (!(err instanceof NetworkFailure)) return err;
  // Anything else undici throws mid-request leaves the outcome unknown, like a reset.
  const failure = networkFailure(cause) ?? 'reset';
  const codes = codesOf(cause);
  const detail = codes[0] ?? (cause instanceof Error ? cause.message : 'error');
  return new LedgerTransportError(
    failure,
    what,
    `${what}: ${FAILURE_ADVICE[failure]} (${detail}).`,
    { cause },
  );
}
