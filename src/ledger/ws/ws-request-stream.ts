import type { IncomingMessage } from 'node:http';
import { WebSocket, type ClientOptions, type RawData } from 'ws';
import { AbortError } from '../../core/abort-error.js';
import { IllegalStateError } from '../../core/illegal-state-error.js';
import { needsFreshToken } from '../error-checks.js';
import { isJsCantonError, parseJsCantonError } from '../js-canton-error.js';
import { LedgerApiError } from '../ledger-api-error.js';
import { LedgerTransportError } from '../ledger-transport-error.js';
import { parseWireJson } from '../wire/parse-wire-json.js';
import type { StreamContext } from './stream-context.js';
import { DEFAULT_PING_INTERVAL_MS, WsKeepAlive } from './ws-keep-alive.js';
import { closeError, openError, readRejection, rejectionError } from './ws-stream-errors.js';
import { wsUrl } from './ws-url.js';

/** The subprotocol Canton answers with; it must always be offered (NOTES.md §1.2). */
export const DAML_WS_PROTOCOL = 'daml.ws.auth';

const DEFAULT_HIGH_WATER_MARK = 256;
const DEFAULT_HANDSHAKE_TIMEOUT_MS = 30_000;

export type WsRequestStreamOptions = {
  readonly signal?: AbortSignal | undefined;
  /**
   * Frames held for a slow consumer before the socket is paused (default 256). Reading resumes at
   * half of it. Frames that were already in the socket's last read still arrive, so the buffer may
   * exceed the mark by what one read holds.
   */
  readonly highWaterMark?: number | undefined;
  /** Bound on the opening handshake, in ms (default 30 000). */
  readonly handshakeTimeoutMs?: number;
  /** Called once the socket is open (before the request message is sent). */
  readonly onOpen?: (() => void) | undefined;
  /**
   * Called once, only if the socket opened, as soon as the stream is over on it: the socket
   * closed or failed, or the stream settled (an error frame, an abort, a consumer stop) and the
   * socket is closing. Not after the closing handshake: a peer that never answers it would keep
   * a dead stream looking connected for the close timeout.
   */
  readonly onClose?: (() => void) | undefined;
};

type Waiter = {
  resolve: (result: IteratorResult<unknown>) => void;
  reject: (error: unknown) => void;
};

/**
 * One websocket call of the JSON Ledger API (NOTES.md §2): connects to `path` below the base URL,
 * sends `message` once, and yields every JSON frame the server sends until it closes the socket.
 *
 * - A JsCantonError frame ends the stream with a LedgerApiError (status undefined).
 * - A normal close (1000, or a close frame without a code) ends the iteration.
 * - Anything else ends it with a LedgerTransportError: `connect` when the socket never opened,
 *   `timeout` for a slow handshake, `closed` for an abnormal close, `bad-response` for a refused
 *   upgrade without a JsCantonError body or a frame that is not JSON text.
 * - While open, the socket is pinged every `ctx.pingIntervalMs` (see WsKeepAlive).
 * - Aborting the signal closes the socket and throws AbortError; `return()` (a consumer `break`)
 *   closes the socket.
 *
 * Nothing happens until the first `next()`. The stream can be iterated once.
 */
export class WsRequestStream implements AsyncIterableIterator<unknown> {
  /** "WS /path", used in errors. */
  readonly request: string;
  readonly #ctx: StreamContext;
  readonly #path: string;
  readonly #message: unknown;
  readonly #signal: AbortSignal | undefined;
  readonly #highWaterMark: number;
  readonly #handshakeTimeoutMs: number;
  readonly #onOpenListener: (() => void) | undefined;
  readonly #onCloseListener: (() => void) | undefined;
  readonly #keepAlive: WsKeepAlive;

  #ws: WebSocket | undefined;
  #started = false;
  #opened = false;
  #closeReported = false;
  #queue: unknown[] = [];
  #peak = 0;
  /** Set once the stream is over; `error` undefined means a normal end. */
  #terminal: { error: Error | undefined } | undefined;
  #delivered = false;
  #waiter: Waiter | undefined;
  #socketError: Error | undefined;
  readonly #onAbort = (): void => this.#abort();

  constructor(
    ctx: StreamContext,
    path: string,
    message: unknown,
    options: WsRequestStreamOptions = {},
  ) {
    this.#ctx = ctx;
    this.#path = path;
    this.#message = message;
    this.#signal = options.signal;
    this.#highWaterMark = Math.max(1, options.highWaterMark ?? DEFAULT_HIGH_WATER_MARK);
    this.#handshakeTimeoutMs = options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    this.#onOpenListener = options.onOpen;
    this.#onCloseListener = options.onClose;
    this.#keepAlive = new WsKeepAlive(ctx.clock, ctx.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS);
    this.request = `WS ${path}`;
  }

  /** Frames received and not yet consumed. */
  get buffered(): number {
    return this.#queue.length;
  }

  /** Keep-alive pings sent on this socket. */
  get pings(): number {
    return this.#keepAlive.pings;
  }

  /** The most frames ever held at once (for tests and metrics). */
  get peakBuffered(): number {
    return this.#peak;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<unknown>> {
    if (this.#waiter !== undefined) {
      return Promise.reject(new IllegalStateError('WsRequestStream.next() called concurrently'));
    }
    if (!this.#started) {
      this.#started = true;
      void this.#start();
    }
    if (this.#queue.length > 0) {
      const value = this.#queue.shift();
      this.#resumeIfDrained();
      return Promise.resolve({ value, done: false });
    }
    if (this.#terminal !== undefined) return this.#finish();
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<unknown>> {
    this.#queue = [];
    this.#settle(undefined, 'consumer stopped');
    this.#delivered = true;
    return Promise.resolve({ value: undefined, done: true });
  }

  async #start(): Promise<void> {
    try {
      if (this.#signal?.aborted === true) {
        this.#abort();
        return;
      }
      this.#signal?.addEventListener('abort', this.#onAbort, { once: true });
      const token = await this.#ctx.auth?.token(this.#signal);
      if (this.#terminal !== undefined) return;
      const protocols =
        token === undefined || token === ''
          ? [DAML_WS_PROTOCOL]
          : [`jwt.token.${token}`, DAML_WS_PROTOCOL];
      const ws = new WebSocket(wsUrl(this.#ctx.url, this.#path), protocols, this.#clientOptions());
      this.#ws = ws;
      ws.on('open', () => this.#onOpen(ws));
      ws.on('message', (data, isBinary) => this.#onMessage(data, isBinary));
      ws.on('unexpected-response', (_req, res) => this.#onRejected(res));
      ws.on('error', (err) => this.#onError(err));
      ws.on('close', (code, reason) => this.#onClose(code, reason));
    } catch (err) {
      this.#settle(this.#signal?.aborted === true ? abortError(this.#signal) : toError(err));
    }
  }

  #clientOptions(): ClientOptions {
    const tls = this.#ctx.tls;
    return {
      handshakeTimeout: this.#handshakeTimeoutMs,
      ...(tls === undefined
        ? {}
        : {
            rejectUnauthorized: tls.rejectUnauthorized,
            ...(tls.ca === undefined ? {} : { ca: tls.ca }),
            ...(tls.cert === undefined ? {} : { cert: tls.cert }),
            ...(tls.key === undefined ? {} : { key: tls.key }),
          }),
    };
  }

  #onOpen(ws: WebSocket): void {
    if (this.#terminal !== undefined) return;
    this.#opened = true;
    this.#keepAlive.start(ws);
    this.#ctx.logger.debug({ path: this.#path }, 'websocket open');
    this.#onOpenListener?.();
    ws.send(JSON.stringify(this.#message), (err) => {
      if (err !== undefined && err !== null) {
        this.#settle(
          new LedgerTransportError(
            'closed',
            this.request,
            `${this.request}: sending the request failed`,
            {
              cause: err,
            },
          ),
        );
      }
    });
  }

  #onMessage(data: RawData, isBinary: boolean): void {
    if (this.#terminal !== undefined) return;
    if (isBinary) {
      this.#settle(this.#badFrame('sent a binary frame'));
      return;
    }
    let value: unknown;
    try {
      value = parseWireJson(rawToBuffer(data).toString('utf8'));
    } catch {
      this.#settle(this.#badFrame('sent a frame that is not JSON'));
      return;
    }
    if (isJsCantonError(value)) {
      const error = new LedgerApiError(parseJsCantonError(value)!, this.request);
      // An expired or revoked token (UNAUTHENTICATED, ACCESS_TOKEN_EXPIRED, rights changed):
      // the next attempt needs a new one, not the cached one.
      if (needsFreshToken(error)) this.#ctx.auth?.invalidate();
      this.#settle(error);
      return;
    }
    this.#deliver(value);
  }

  #onRejected(res: IncomingMessage): void {
    readRejection(res, this.#handshakeTimeoutMs, (status, body) => {
      if (status === 401) this.#ctx.auth?.invalidate();
      this.#settle(rejectionError(this.request, status, body));
    });
  }

  #onError(err: Error): void {
    if (this.#terminal !== undefined) return;
    if (this.#opened) {
      // A close event follows; it decides how the stream ends. The stream is down already.
      this.#socketError = err;
      this.#reportClosed();
      return;
    }
    this.#settle(openError(this.request, err, this.#handshakeTimeoutMs, this.#ctx.url));
  }

  #onClose(code: number, reason: Buffer): void {
    this.#ctx.logger.debug({ path: this.#path, code }, 'websocket closed');
    this.#reportClosed();
    if (this.#terminal !== undefined) return;
    this.#settle(closeError(this.request, this.#opened, code, reason, this.#socketError));
  }

  /** `onClose`, once, for a socket that opened. */
  #reportClosed(): void {
    this.#keepAlive.stop();
    if (!this.#opened || this.#closeReported) return;
    this.#closeReported = true;
    this.#onCloseListener?.();
  }

  #badFrame(what: string): LedgerTransportError {
    return new LedgerTransportError(
      'bad-response',
      this.request,
      `${this.request}: the participant ${what}`,
    );
  }

  #deliver(value: unknown): void {
    if (this.#waiter !== undefined) {
      const waiter = this.#waiter;
      this.#waiter = undefined;
      waiter.resolve({ value, done: false });
      return;
    }
    this.#queue.push(value);
    this.#peak = Math.max(this.#peak, this.#queue.length);
    if (this.#queue.length >= this.#highWaterMark && this.#ws !== undefined && !this.#ws.isPaused) {
      this.#ws.pause();
    }
  }

  #resumeIfDrained(): void {
    const ws = this.#ws;
    if (ws?.isPaused === true && this.#queue.length <= this.#highWaterMark / 2) ws.resume();
  }

  #abort(): void {
    if (this.#delivered) return;
    this.#queue = [];
    this.#terminal = undefined;
    this.#settle(abortError(this.#signal), 'aborted');
  }

  /** Ends the stream once: closes the socket and hands the outcome to a waiting consumer. */
  #settle(error: Error | undefined, closeReason = ''): void {
    if (this.#terminal !== undefined) return;
    this.#terminal = { error };
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#reportClosed();
    const ws = this.#ws;
    if (ws !== undefined) {
      if (ws.readyState === WebSocket.OPEN) ws.close(1000, closeReason);
      else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
    }
    if (this.#waiter !== undefined) {
      const waiter = this.#waiter;
      this.#waiter = undefined;
      this.#finish().then(waiter.resolve, waiter.reject);
    }
  }

  #finish(): Promise<IteratorResult<unknown>> {
    const error = this.#delivered ? undefined : this.#terminal?.error;
    this.#delivered = true;
    if (error !== undefined) return Promise.reject(error);
    return Promise.resolve({ value: undefined, done: true });
  }
}

function rawToBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

function abortError(signal: AbortSignal | undefined): AbortError {
  return new AbortError(undefined, { cause: signal?.reason });
}
