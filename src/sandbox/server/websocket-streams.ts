import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { TimerHandle } from '../../core/clock.js';
import { errorJson, pathOf, rawText } from './http-io.js';
import { notFoundBody } from './not-found-body.js';
import { BodyDecodeError } from './request-parsing.js';
import { ASYNCAPI_CHANNELS } from './route-table.js';
import type { SandboxContext } from './sandbox-context.js';
import { bearerToken, websocketToken, type Principal } from './sandbox-auth.js';
import { SandboxApiError } from './sandbox-api-error.js';
import type { OpenedStream, StreamSink } from './paced-send.js';
import { openActiveContracts, openCompletions, openUpdates } from './stream-openers.js';

const WS_CHANNELS: ReadonlySet<string> = new Set(ASYNCAPI_CHANNELS);
/** The open-ended update and completion channels: what the stream faults act on. */
const LEDGER_STREAMS: ReadonlySet<string> = new Set([
  '/v2/updates',
  '/v2/commands/completions',
  '/v2/commands/command-completions',
]);

/** How the fault injector reaches an open update or completion websocket. */
type LedgerStream = {
  /** Abrupt: no close frame (closeStreams*, refuseStreams). */
  readonly drop: () => void;
  /** Canton's way to end a stream: one error frame, then a normal close. */
  readonly fail: (err: SandboxApiError) => void;
  /** Whether its request arrived (a stream Canton would be serving). */
  readonly started: () => boolean;
};

/**
 * The websocket channels: the upgrade (auth, refusal), one request message per socket, the
 * stream behind it, the idle timeout, and the stream faults.
 */
export class WebsocketStreams {
  readonly #s: SandboxContext;
  readonly #wss: WebSocketServer;
  readonly #sockets = new Set<WebSocket>();
  readonly #ledgerStreams = new Map<WebSocket, LedgerStream>();

  constructor(ctx: SandboxContext) {
    this.#s = ctx;
    this.#wss = new WebSocketServer({
      noServer: true,
      perMessageDeflate: false,
      // Canton always answers daml.ws.auth, whatever the client offered (NOTES.md §1.2).
      handleProtocols: () => 'daml.ws.auth',
    });
  }

  closeAll(): void {
    for (const ws of this.#sockets) ws.terminate();
    this.#wss.close();
  }

  /** refuseStreams: every open update and completion websocket goes, request sent or not. */
  dropLedgerStreams(): void {
    const streams = [...this.#ledgerStreams.values()];
    this.#ledgerStreams.clear();
    for (const stream of streams) stream.drop();
    if (streams.length > 0) this.#s.faults.countDroppedStreams(streams.length);
  }

  /** streamErrors was just set: every served update and completion stream draws once. */
  failLedgerStreams(): void {
    const now = this.#s.clock.now();
    for (const stream of [...this.#ledgerStreams.values()]) {
      if (!stream.started()) continue;
      const err = this.#s.faults.streamError(now);
      if (err !== undefined) stream.fail(err);
    }
  }

  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const s = this.#s;
    const path = pathOf(req.url ?? '/');
    const reject = (status: number, reason: string, body: string): void => {
      socket.end(
        `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    };
    if (!WS_CHANNELS.has(path)) {
      reject(404, 'Not Found', notFoundBody(req));
      return;
    }
    if (LEDGER_STREAMS.has(path) && s.faults.refuseStream()) {
      const err = new SandboxApiError(
        'SERVICE_NOT_RUNNING',
        `Injected by the sandbox's fault injection (refuseStreams): ${path} is not served`,
      );
      reject(err.httpStatus, 'Service Unavailable', errorJson(s, err));
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
        reject(403, 'Forbidden', errorJson(s, err));
        return;
      }
      authError = err;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) =>
      this.#onSocket(ws, socket, path, principal, authError),
    );
  }

  #onSocket(
    ws: WebSocket,
    socket: Duplex,
    path: string,
    principal: Principal | undefined,
    authError: SandboxApiError | undefined,
  ): void {
    const s = this.#s;
    const ledger = LEDGER_STREAMS.has(path);
    this.#sockets.add(ws);
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
    const idle = this.#idleTimer(ws, () => {
      uncork();
      finished = true;
      stream?.cancel();
    });
    const drop = (): void => {
      uncork();
      finished = true;
      stream?.cancel();
      ws.terminate();
    };
    const fail = (err: unknown): void => {
      const apiError =
        err instanceof SandboxApiError
          ? err
          : err instanceof BodyDecodeError
            ? new SandboxApiError('INVALID_ARGUMENT', err.message)
            : new SandboxApiError('LEDGER_API_INTERNAL_ERROR', String(err), { jsonLayer: true });
      if (!finished) {
        idle.touch();
        ws.send(errorJson(s, apiError));
      }
      finished = true;
      stream?.cancel();
      ws.close(1000);
    };
    ws.on('close', () => {
      finished = true;
      idle.stop();
      this.#sockets.delete(ws);
      this.#ledgerStreams.delete(ws);
      stream?.cancel();
    });
    ws.on('error', () => drop());
    // Any frame from the client is traffic for the idle timeout, pings and pongs included.
    ws.on('message', idle.touch);
    ws.on('ping', idle.touch);
    ws.on('pong', idle.touch);
    if (ledger) {
      // The fault may have come while the upgrade was being authenticated.
      if (s.faults.faults.refuseStreams === true) {
        s.faults.countDroppedStreams(1);
        drop();
        return;
      }
      this.#ledgerStreams.set(ws, { drop, fail, started: () => stream !== undefined });
    }
    const sink: StreamSink = {
      send: (frame) => {
        if (finished) return;
        if (ledger && s.faults.faults.streamErrors !== undefined) {
          const err = s.faults.streamError(s.clock.now());
          if (err !== undefined) {
            fail(err);
            return;
          }
        }
        if (!sentThisTurn) {
          sentThisTurn = true;
          setImmediate(uncork);
        } else if (!corked) {
          corked = true;
          socket.cork();
        }
        idle.touch();
        ws.send(frame);
        sent++;
        const limit = s.faults.faults.closeStreamsAfterMessages;
        if (limit !== undefined && sent >= limit && ledger) {
          s.faults.countDroppedStreams(1);
          drop();
        }
      },
      drop,
      wantsMore: () => !finished,
      backpressure: {
        full: () => ws.bufferedAmount >= s.limits.streamBufferBytes,
        whenReady: (go) => {
          if (socket.destroyed) {
            go();
            return;
          }
          const once = (): void => {
            socket.off('drain', once);
            socket.off('close', once);
            go();
          };
          socket.on('drain', once);
          socket.on('close', once);
        },
      },
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
        const opened = this.#open(path, request, principal, sink);
        stream = opened;
        if (finished) opened.cancel();
        opened.sent.then(() => {
          if (finished || opened.openEnded) return;
          finished = true;
          ws.close(1000);
        }, fail);
      } catch (err) {
        fail(err);
      }
    });
  }

  #open(path: string, request: unknown, principal: Principal, sink: StreamSink): OpenedStream {
    const s = this.#s;
    switch (path) {
      case '/v2/updates':
        return openUpdates(s, request, principal, sink);
      case '/v2/commands/completions':
        return openCompletions(s, 'legacy', request, principal, sink);
      case '/v2/commands/command-completions':
        return openCompletions(s, 'v35', request, principal, sink);
      case '/v2/state/active-contracts':
        return openActiveContracts(s, request, principal, sink);
      default:
        throw new SandboxApiError(
          'UNSUPPORTED_OPERATION',
          `The sandbox does not support the deprecated ${path} stream: use /v2/updates`,
          { jsonLayer: true },
        );
    }
  }

  /**
   * pekko-http's idle timeout: no frame either way for `idleTimeoutMs` and the connection is
   * failed, which aborts the TCP connection without a close frame (the client sees 1006).
   * One timer per socket, re-armed for the remaining quiet time rather than on every frame.
   */
  #idleTimer(
    ws: WebSocket,
    onIdle: () => void,
  ): { readonly touch: () => void; readonly stop: () => void } {
    const clock = this.#s.clock;
    const limit = this.#s.limits.idleTimeoutMs;
    let last = clock.now();
    let timer: TimerHandle | undefined;
    const check = (): void => {
      timer = undefined;
      const quiet = clock.now() - last;
      if (quiet < limit) {
        timer = clock.setTimeout(check, limit - quiet);
        return;
      }
      onIdle();
      ws.terminate();
    };
    if (limit > 0) timer = clock.setTimeout(check, limit);
    return {
      touch: () => {
        last = clock.now();
      },
      stop: () => {
        if (timer !== undefined) clock.clearTimeout(timer);
        timer = undefined;
      },
    };
  }
}
