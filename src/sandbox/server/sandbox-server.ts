import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { adminRoutes } from './admin-routes.js';
import { packageRoutes } from './package-routes.js';
import { commandRoutes } from './command-routes.js';
import { controlRoutes, type ControlHandler } from './control-routes.js';
import { errorJson, pathOf, readBody, sendBytes, sendJson, sendText } from './http-io.js';
import { METHOD_NOT_ALLOWED_TEXT, notFoundBody } from './not-found-body.js';
import { readRoutes } from './read-routes.js';
import { BodyDecodeError } from './request-parsing.js';
import { RouteTable, type RouteResult } from './route-table.js';
import type { SandboxContext } from './sandbox-context.js';
import { bearerToken, type Principal } from './sandbox-auth.js';
import { SandboxApiError } from './sandbox-api-error.js';
import { WebsocketStreams } from './websocket-streams.js';

/**
 * The sandbox's HTTP front end: the JSON Ledger API v2 routes, the websocket upgrade (handed to
 * WebsocketStreams), and the `/sandbox/*` control endpoints.
 */
export class SandboxServer {
  readonly #s: SandboxContext;
  readonly #routes: RouteTable;
  readonly #http: Server;
  readonly #streams: WebsocketStreams;
  readonly #control: ControlHandler;
  readonly #sockets = new Set<Socket>();
  #closing: Promise<void> | undefined;

  constructor(ctx: SandboxContext) {
    this.#s = ctx;
    this.#routes = new RouteTable({
      ...commandRoutes(ctx),
      ...readRoutes(ctx),
      ...adminRoutes(ctx),
      ...packageRoutes(ctx),
    });
    this.#streams = new WebsocketStreams(ctx);
    this.#control = controlRoutes(ctx, this.#streams);
    // pekko's idle-timeout closes idle keep-alive connections too; 0 keeps them open.
    this.#http = createServer({ keepAliveTimeout: ctx.limits.idleTimeoutMs }, (req, res) => {
      void this.#handle(req, res);
    });
    this.#http.on('connection', (socket: Socket) => {
      socket.setNoDelay(true);
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    this.#http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      void this.#streams.upgrade(req, socket, head);
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
      this.#streams.closeAll();
      this.#http.close(() => resolve());
      for (const socket of this.#sockets) socket.destroy();
    });
    return this.#closing;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const s = this.#s;
    const url = req.url ?? '/';
    const path = pathOf(url);
    const q = url.indexOf('?');
    const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    const method = req.method ?? 'GET';
    let correlation: string | undefined;
    try {
      if (path.startsWith('/sandbox/')) {
        await this.#control(req, res);
        return;
      }
      const found = this.#routes.find(method, path);
      if (found === undefined) {
        await readBody(req);
        sendJson(res, 404, notFoundBody(req));
        return;
      }
      if (found === 'method') {
        await readBody(req);
        sendText(res, 405, METHOD_NOT_ALLOWED_TEXT);
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
      const handler = found.route.handler;
      if (handler === undefined) {
        // Before the body is parsed: some of these take bytes (a DAR), not JSON.
        throw new SandboxApiError(
          'UNSUPPORTED_OPERATION',
          `The sandbox does not support ${method} ${found.route.template}: ${unsupportedReason(found.route.template)}`,
          { jsonLayer: true },
        );
      }
      let body: unknown;
      if (text.length > 0) {
        try {
          body = JSON.parse(text);
        } catch (err) {
          throw new BodyDecodeError((err as Error).message);
        }
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
      else if ('bytes' in result) sendBytes(res, result.status, result.bytes, result.headers);
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
      sendJson(res, apiError.httpStatus, errorJson(s, apiError));
    }
  }
}

function unsupportedReason(template: string): string {
  if (template.startsWith('/v2/dars') || template.startsWith('/v2/packages')) {
    return 'the sandbox registers its packages at start (--dar, --model), not over the API (see docs/sandbox.md)';
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
