import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Duplex } from 'node:stream';
import { adminRoutes } from './admin-routes.js';
import { commandRoutes } from './command-routes.js';
import { renderJsCantonError, type JsCantonErrorBody } from './error-rendering.js';
import { FaultConfigError, parseFaults } from './fault-injector.js';
import { readRoutes } from './read-routes.js';
import { asObject, BodyDecodeError } from './request-parsing.js';
import { ASYNCAPI_CHANNELS, RouteTable, type RouteResult } from './route-table.js';
import type { SandboxContext } from './sandbox-context.js';
import { bearerToken, websocketToken, type Principal } from './sandbox-auth.js';
import { SandboxApiError } from './sandbox-api-error.js';
import {
  activeContractFrames,
  openCompletions,
  openUpdates,
  type OpenedStream,
  type StreamSink,
} from './stream-openers.js';

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const WS_CHANNELS: ReadonlySet<string> = new Set(ASYNCAPI_CHANNELS);
/** The open-ended update and completion channels: what the stream faults act on. */
const LEDGER_STREAMS: ReadonlySet<string> = new Set([
  '/v2/updates',
  '/v2/commands/completions',
  '/v2/commands/command-completions',
]);

function errorBody(s: SandboxContext, err: SandboxApiError): string {
  return JSON.stringify(
    renderJsCantonError(err, {
      participant: s.participantName,
      traceId: s.traceId(),
      correlationId: err.correlationId,
    }),
  );
}

/** Errors that are no Canton error (unknown path, wrong method): code = gRPC status name, category -1. */
function nonCantonError(s: SandboxContext, code: string, grpc: number, cause: string): string {
  const body: JsCantonErrorBody = {
    code,
    cause,
    traceId: s.traceId(),
    context: {},
    resources: [],
    errorCategory: -1,
    grpcCodeValue: grpc,
  };
  return JSON.stringify(body);
}

function sendJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=UTF-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new BodyDecodeError('the body is too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () =>
      resolve(
        chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'),
      ),
    );
    req.on('error', reject);
  });
}

/**
 * The sandbox's HTTP and websocket front end: the JSON Ledger API v2 routes, the websocket
 * channels, and the `/sandbox/*` control endpoints (faults, prune).
 */
export class SandboxServer {
  readonly #s: SandboxContext;
  readonly #routes: RouteTable;
  readonly #http: Server;
  readonly #wss: WebSocketServer;
  readonly #sockets = new Set<Socket>();
  readonly #streams = new Set<WebSocket>();
  /** The open update and completion websockets, with how to drop each (refuseStreams). */
  readonly #ledgerStreams = new Map<WebSocket, () => void>();
  #closing: Promise<void> | undefined;

  constructor(ctx: SandboxContext) {
    this.#s = ctx;
    this.#routes = new RouteTable({
      ...commandRoutes(ctx),
      ...readRoutes(ctx),
      ...adminRoutes(ctx),
    });
    this.#http = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
      void this.#handle(req, res);
    });
    this.#http.on('connection', (socket: Socket) => {
      socket.setNoDelay(true);
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    this.#wss = new WebSocketServer({
      noServer: true,
      perMessageDeflate: false,
      // Canton always answers daml.ws.auth, whatever the client offered (NOTES.md §1.2).
      handleProtocols: () => 'daml.ws.auth',
    });
    this.#http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      void this.#upgrade(req, socket, head);
    });
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#http.once('error', reject);
      this.#http.listen(port, host, () => {
        this.#http.off('error', reject);
        resolve((this.#http.address() as AddressInfo).port);
      });
    });
  }

  /** Idempotent: closes every websocket and connection, then the listener. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      for (const ws of this.#streams) ws.terminate();
      this.#wss.close();
      this.#http.close(() => resolve());
      for (const socket of this.#sockets) socket.destroy();
    });
    return this.#closing;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const s = this.#s;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    const method = req.method ?? 'GET';
    let correlation: string | undefined;
    try {
      if (path.startsWith('/sandbox/')) {
        await this.#control(method, path, req, res);
        return;
      }
      const found = this.#routes.find(method, path);
      if (found === undefined) {
        await readBody(req);
        sendJson(res, 404, nonCantonError(s, 'NOT_FOUND', 5, `The sandbox serves no ${path}`));
        return;
      }
      if (found === 'method') {
        await readBody(req);
        sendJson(
          res,
          405,
          nonCantonError(s, 'UNIMPLEMENTED', 12, `${method} is not supported on ${path}`),
        );
        return;
      }
      if (s.faults.active) {
        const latency = s.faults.httpLatencyMs();
        if (latency > 0) await s.clock.sleep(latency);
      }
      const text = await readBody(req);
      let principal: Principal = { kind: 'any', userId: undefined };
      if (!found.route.public) {
        const token = bearerToken(req.headers.authorization);
        if (token === '' && req.headers.authorization !== undefined) {
          sendText(res, 400, 'Invalid value for: header Authorization');
          return;
        }
        principal = await s.auth.authenticate(token);
      }
      let body: unknown;
      if (text.length > 0) {
        try {
          body = JSON.parse(text);
        } catch (err) {
          throw new BodyDecodeError((err as Error).message);
        }
      }
      const handler = found.route.handler;
      if (handler === undefined) {
        throw new SandboxApiError(
          'UNSUPPORTED_OPERATION',
          `The sandbox does not support ${method} ${found.route.template}: ${unsupportedReason(found.route.template)}`,
          { jsonLayer: true },
        );
      }
      if (body === undefined && (method === 'POST' || method === 'PATCH')) {
        throw new BodyDecodeError('missing body');
      }
      if (typeof body === 'object' && body !== null) {
        const sid = (body as { submissionId?: unknown }).submissionId;
        if (typeof sid === 'string') correlation = sid;
      }
      const result: RouteResult = await handler({
        method,
        path,
        params: found.params,
        query,
        body,
        principal,
        req,
        res,
      });
      if ('handled' in result) return;
      if ('json' in result) sendJson(res, result.status, result.json);
      else sendText(res, result.status, result.text);
    } catch (err) {
      if (res.headersSent || res.destroyed) return;
      if (err instanceof BodyDecodeError) {
        sendText(res, 400, err.message);
        return;
      }
      const apiError =
        err instanceof SandboxApiError
          ? err
          : new SandboxApiError(
              'LEDGER_API_INTERNAL_ERROR',
              String((err as Error)?.message ?? err),
              {
                jsonLayer: true,
              },
            );
      if (!(err instanceof SandboxApiError)) {
        s.logger.error({ err: String(err), path }, 'sandbox request failed');
      }
      apiError.correlationId ??= correlation;
      sendJson(res, apiError.httpStatus, errorBody(s, apiError));
    }
  }

  async #control(
    method: string,
    path: string,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const s = this.#s;
    const text = await readBody(req);
    const parse = (): unknown => {
      try {
        return text === '' ? {} : JSON.parse(text);
      } catch {
        throw new FaultConfigError('the body is not JSON');
      }
    };
    try {
      if (path === '/sandbox/faults') {
        if (method === 'GET') return sendJson(res, 200, JSON.stringify(s.faults.faults));
        if (method === 'DELETE') {
          s.faults.clear();
          s.hub.setDropEvery(undefined);
          return sendJson(res, 200, '{}');
        }
        if (method === 'POST') {
          s.faults.set(parseFaults(parse()));
          s.hub.setDropEvery(s.faults.faults.closeStreamsEveryMs, (n) =>
            s.faults.countDroppedStreams(n),
          );
          if (s.faults.faults.refuseStreams === true) this.#dropLedgerStreams();
          return sendJson(res, 200, JSON.stringify(s.faults.faults));
        }
      }
      if (path === '/sandbox/fault-stats' && method === 'GET') {
        return sendJson(res, 200, JSON.stringify(s.faults.stats()));
      }
      if (path === '/sandbox/prune' && method === 'POST') {
        const o = asObject(parse());
        if (typeof o.offset !== 'number' || !Number.isInteger(o.offset)) {
          throw new FaultConfigError('prune takes {"offset": <positive integer>}');
        }
        const r = s.engine.prune(o.offset);
        if (!r.ok) {
          const e = r.error;
          const err = new SandboxApiError(e.code, e.cause, {
            category: e.category,
            ...(e.context === undefined ? {} : { context: e.context }),
          });
          return sendJson(res, err.httpStatus, errorBody(s, err));
        }
        s.prunedAtMs = s.clock.now();
        return sendJson(res, 200, JSON.stringify({ prunedUpToInclusive: o.offset }));
      }
      sendJson(
        res,
        404,
        nonCantonError(s, 'NOT_FOUND', 5, `The sandbox serves no ${method} ${path}`),
      );
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      const apiError = new SandboxApiError('INVALID_ARGUMENT', msg, { jsonLayer: true });
      sendJson(res, 400, errorBody(s, apiError));
    }
  }

  async #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const s = this.#s;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const reject = (status: number, reason: string, body: string): void => {
      socket.end(
        `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    };
    if (!WS_CHANNELS.has(path)) {
      reject(404, 'Not Found', nonCantonError(s, 'NOT_FOUND', 5, `No websocket channel ${path}`));
      return;
    }
    if (LEDGER_STREAMS.has(path) && s.faults.refuseStream()) {
      const err = new SandboxApiError(
        'SERVICE_NOT_RUNNING',
        `Injected by the sandbox's fault injection (refuseStreams): ${path} is not served`,
      );
      reject(err.httpStatus, 'Service Unavailable', errorBody(s, err));
      return;
    }
    const headerToken = bearerToken(req.headers.authorization);
    const token =
      headerToken !== undefined && headerToken !== ''
        ? headerToken
        : websocketToken(req.headers['sec-websocket-protocol']);
    let principal: Principal | undefined;
    let authError: SandboxApiError | undefined;
    try {
      principal = await s.auth.authenticate(token);
    } catch (err) {
      if (!(err instanceof SandboxApiError)) throw err;
      // Claims resolution failures (unknown user) fail the upgrade itself; a bad token only
      // fails the stream, after the request message (NOTES.md §2).
      if (err.grpcCode === 7) {
        reject(403, 'Forbidden', errorBody(s, err));
        return;
      }
      authError = err;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) =>
      this.#onSocket(ws, socket, path, principal, authError),
    );
  }

  /** refuseStreams: every open update and completion websocket goes, request sent or not. */
  #dropLedgerStreams(): void {
    const drops = [...this.#ledgerStreams.values()];
    this.#ledgerStreams.clear();
    for (const drop of drops) drop();
    if (drops.length > 0) this.#s.faults.countDroppedStreams(drops.length);
  }

  #onSocket(
    ws: WebSocket,
    socket: Duplex,
    path: string,
    principal: Principal | undefined,
    authError: SandboxApiError | undefined,
  ): void {
    const s = this.#s;
    this.#streams.add(ws);
    let stream: OpenedStream | undefined;
    let sent = 0;
    let finished = false;
    // Under load, frames sent in one event-loop turn leave in one write: the first goes out at
    // once (no latency when quiet), a second one in the same turn corks the socket until the
    // turn ends.
    let corked = false;
    let sentThisTurn = false;
    const uncork = (): void => {
      sentThisTurn = false;
      if (!corked) return;
      corked = false;
      socket.uncork();
    };
    const drop = (): void => {
      uncork();
      finished = true;
      stream?.cancel();
      ws.terminate();
    };
    ws.on('close', () => {
      finished = true;
      this.#streams.delete(ws);
      this.#ledgerStreams.delete(ws);
      stream?.cancel();
    });
    ws.on('error', () => drop());
    if (LEDGER_STREAMS.has(path)) {
      // The fault may have come while the upgrade was being authenticated.
      if (s.faults.faults.refuseStreams === true) {
        s.faults.countDroppedStreams(1);
        drop();
        return;
      }
      this.#ledgerStreams.set(ws, drop);
    }
    const sink: StreamSink = {
      send: (frame) => {
        if (finished) return;
        if (!sentThisTurn) {
          sentThisTurn = true;
          setImmediate(uncork);
        } else if (!corked) {
          corked = true;
          socket.cork();
        }
        ws.send(frame);
        sent++;
        const limit = s.faults.faults.closeStreamsAfterMessages;
        if (limit !== undefined && sent >= limit && path !== '/v2/state/active-contracts') {
          s.faults.countDroppedStreams(1);
          drop();
        }
      },
      drop,
      wantsMore: () => !finished,
    };
    const fail = (err: unknown): void => {
      const apiError =
        err instanceof SandboxApiError
          ? err
          : err instanceof BodyDecodeError
            ? new SandboxApiError('INVALID_ARGUMENT', err.message)
            : new SandboxApiError('LEDGER_API_INTERNAL_ERROR', String(err), { jsonLayer: true });
      if (!finished) ws.send(errorBody(s, apiError));
      finished = true;
      ws.close(1000);
    };
    ws.once('message', (data: RawData) => {
      try {
        if (authError !== undefined || principal === undefined) {
          throw authError ?? new SandboxApiError('UNAUTHENTICATED', 'no principal');
        }
        let request: unknown;
        try {
          request = JSON.parse(rawText(data));
        } catch (e) {
          throw new BodyDecodeError((e as Error).message);
        }
        switch (path) {
          case '/v2/updates':
            stream = openUpdates(s, request, principal, sink);
            break;
          case '/v2/commands/completions':
            stream = openCompletions(s, 'legacy', request, principal, sink);
            break;
          case '/v2/commands/command-completions':
            stream = openCompletions(s, 'v35', request, principal, sink);
            break;
          case '/v2/state/active-contracts':
            for (const frame of activeContractFrames(s, request, principal).frames) {
              sink.send(frame);
            }
            stream = { openEnded: false, cancel: () => undefined };
            break;
          default:
            throw new SandboxApiError(
              'UNSUPPORTED_OPERATION',
              `The sandbox does not support the deprecated ${path} stream: use /v2/updates`,
              { jsonLayer: true },
            );
        }
        if (finished) stream.cancel();
        else if (!stream.openEnded) {
          finished = true;
          ws.close(1000);
        }
      } catch (err) {
        fail(err);
      }
    });
  }
}

function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

function unsupportedReason(template: string): string {
  if (template.startsWith('/v2/dars') || template.startsWith('/v2/packages')) {
    return 'the sandbox loads models, not DARs (see docs/sandbox.md)';
  }
  if (template.includes('reassignment')) return 'the sandbox has a single synchronizer';
  if (template.startsWith('/v2/interactive-submission') || template.includes('/external/')) {
    return 'external signing is not simulated';
  }
  if (template.startsWith('/v2/idps') || template.includes('identity-provider')) {
    return 'the sandbox has only the default identity provider';
  }
  if (template.includes('tree') || template.includes('flats')) {
    return 'deprecated tree and flat endpoints are not served; use /v2/updates';
  }
  return 'not simulated (see docs/sandbox.md)';
}
