import {
  createServer as createHttpServer,
  STATUS_CODES,
  type IncomingMessage,
  type Server,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

/** What the client sent in its upgrade request. */
export type RecordedHandshake = {
  readonly path: string;
  /** The raw `Sec-WebSocket-Protocol` header value exactly as sent, or undefined. */
  readonly protocolHeader: string | undefined;
  readonly authorization: string | undefined;
};

/** An answer to the next handshake instead of the upgrade (e.g. 403 with a JsCantonError body). */
export type HandshakeRejection = {
  readonly status: number;
  readonly body?: unknown;
  /** Send `body` as is (a string) instead of as JSON. */
  readonly raw?: boolean;
};

/** The server side of one accepted websocket, scripted by the test. */
export class FakeWsConnection {
  readonly handshake: RecordedHandshake;
  readonly socket: WebSocket;
  /** Every message the client sent, parsed as JSON. */
  readonly messages: unknown[] = [];
  /** Resolves when the socket is closed, with the close code the server saw. */
  readonly closed: Promise<{ code: number; reason: string }>;
  #messageWaiters: (() => void)[] = [];

  constructor(handshake: RecordedHandshake, socket: WebSocket) {
    this.handshake = handshake;
    this.socket = socket;
    socket.on('message', (data) => {
      this.messages.push(JSON.parse((data as Buffer).toString('utf8')));
      for (const w of this.#messageWaiters.splice(0)) w();
    });
    this.closed = new Promise((resolve) => {
      socket.on('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') }));
    });
  }

  /** The first message (the request), waiting up to `timeoutMs` for it. */
  async request(timeoutMs = 2_000): Promise<unknown> {
    if (this.messages.length === 0) {
      await withTimeout(
        new Promise<void>((resolve) => this.#messageWaiters.push(resolve)),
        timeoutMs,
        'no request message arrived',
      );
    }
    return this.messages[0];
  }

  /** Sends one JSON text frame. */
  send(frame: unknown): Promise<void> {
    return this.sendText(JSON.stringify(frame));
  }

  sendText(text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket.send(text, (err) =>
        err === undefined || err === null ? resolve() : reject(err),
      );
    });
  }

  /** Sends many frames without waiting between them; resolves when all were written. */
  async sendAll(frames: readonly unknown[]): Promise<void> {
    await Promise.all(frames.map((f) => this.send(f)));
  }

  /** A normal close with a close frame (what Canton does at the end of a stream). */
  close(code = 1000, reason = ''): void {
    this.socket.close(code, reason);
  }

  /** Drops the TCP connection without a close frame: the client sees 1006. */
  drop(): void {
    this.socket.terminate();
  }

  get isOpen(): boolean {
    return this.socket.readyState === this.socket.OPEN;
  }
}

/**
 * A real websocket server on 127.0.0.1 that plays the participant's JSON API websockets: it
 * records each handshake, answers the subprotocol `daml.ws.auth` like Canton (even when the
 * client did not offer it), and hands each connection to the test to script.
 */
export class FakeWsServer {
  readonly url: string;
  readonly handshakes: RecordedHandshake[] = [];
  readonly connections: FakeWsConnection[] = [];
  readonly #server: Server;
  readonly #wss: WebSocketServer;
  readonly #rejections: HandshakeRejection[] = [];
  #taken = 0;
  #connectionWaiters: (() => void)[] = [];

  private constructor(server: Server, wss: WebSocketServer, url: string) {
    this.#server = server;
    this.#wss = wss;
    this.url = url;
    server.on('upgrade', (req, socket, head) => this.#onUpgrade(req, socket, head));
  }

  static async start(
    options: { tls?: { key: Buffer; cert: Buffer }; pathPrefix?: string } = {},
  ): Promise<FakeWsServer> {
    const server =
      options.tls === undefined ? createHttpServer() : createHttpsServer({ ...options.tls });
    const wss = new WebSocketServer({ noServer: true, handleProtocols: () => 'daml.ws.auth' });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const scheme = options.tls === undefined ? 'http' : 'https';
    return new FakeWsServer(
      server,
      wss,
      `${scheme}://127.0.0.1:${port}${options.pathPrefix ?? ''}`,
    );
  }

  /** Answers the next handshake with `rejection` instead of upgrading. */
  rejectNext(rejection: HandshakeRejection): void {
    this.#rejections.push(rejection);
  }

  /** The next accepted connection not yet taken, in arrival order. */
  async nextConnection(timeoutMs = 2_000): Promise<FakeWsConnection> {
    while (this.connections.length <= this.#taken) {
      await withTimeout(
        new Promise<void>((resolve) => this.#connectionWaiters.push(resolve)),
        timeoutMs,
        `connection #${this.#taken + 1} did not arrive`,
      );
    }
    return this.connections[this.#taken++]!;
  }

  async close(): Promise<void> {
    for (const c of this.connections) c.socket.terminate();
    this.#wss.close();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const handshake: RecordedHandshake = {
      path: req.url ?? '',
      protocolHeader: rawHeader(req, 'sec-websocket-protocol'),
      authorization: rawHeader(req, 'authorization'),
    };
    this.handshakes.push(handshake);
    const rejection = this.#rejections.shift();
    if (rejection !== undefined) {
      const body =
        rejection.body === undefined
          ? ''
          : rejection.raw === true && typeof rejection.body === 'string'
            ? rejection.body
            : JSON.stringify(rejection.body);
      const type = rejection.raw === true ? 'text/plain' : 'application/json';
      socket.end(
        `HTTP/1.1 ${rejection.status} ${STATUS_CODES[rejection.status] ?? ''}\r\n` +
          `Content-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `Connection: close\r\n\r\n${body}`,
      );
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      this.connections.push(new FakeWsConnection(handshake, ws));
      for (const w of this.#connectionWaiters.splice(0)) w();
    });
  }
}

function rawHeader(req: IncomingMessage, name: string): string | undefined {
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]?.toLowerCase() === name) return req.rawHeaders[i + 1];
  }
  return undefined;
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
