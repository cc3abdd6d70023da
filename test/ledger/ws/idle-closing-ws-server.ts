import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/** One accepted socket, as the idle-closing server saw it. */
export type IdleConnection = {
  readonly path: string;
  readonly socket: WebSocket;
  /** Every message the client sent, parsed. */
  readonly messages: unknown[];
  /** Ping frames received from the client. */
  pings: number;
  /** Whether the server dropped it for being idle. */
  closedIdle: boolean;
};

/**
 * A websocket server that behaves like Canton's pekko-http front end on a quiet ledger: it
 * answers `daml.ws.auth`, reads the request and then sends nothing, and drops any socket that
 * carried no frame either way (data, ping or pong) for `idleTimeoutMs` (pekko's
 * `server.idle-timeout`, 60 s in production). Real time: keep the timeout short.
 */
export class IdleClosingWsServer {
  readonly url: string;
  readonly connections: IdleConnection[] = [];
  readonly #server: Server;
  readonly #wss: WebSocketServer;
  readonly #idleTimeoutMs: number;
  readonly #timers = new Set<NodeJS.Timeout>();

  private constructor(server: Server, wss: WebSocketServer, url: string, idleTimeoutMs: number) {
    this.#server = server;
    this.#wss = wss;
    this.url = url;
    this.#idleTimeoutMs = idleTimeoutMs;
    server.on('upgrade', (req, socket, head) => {
      wss.handleUpgrade(req, socket, head, (ws) => this.#accept(req.url ?? '', ws));
    });
  }

  static async start(idleTimeoutMs: number): Promise<IdleClosingWsServer> {
    const server = createServer();
    const wss = new WebSocketServer({ noServer: true, handleProtocols: () => 'daml.ws.auth' });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return new IdleClosingWsServer(server, wss, `http://127.0.0.1:${port}`, idleTimeoutMs);
  }

  async close(): Promise<void> {
    for (const t of this.#timers) clearTimeout(t);
    for (const c of this.connections) c.socket.terminate();
    this.#wss.close();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(path: string, socket: WebSocket): void {
    const conn: IdleConnection = { path, socket, messages: [], pings: 0, closedIdle: false };
    this.connections.push(conn);
    let timer: NodeJS.Timeout | undefined;
    const touch = (): void => {
      if (timer !== undefined) {
        clearTimeout(timer);
        this.#timers.delete(timer);
      }
      timer = setTimeout(() => {
        conn.closedIdle = true;
        // pekko drops the connection; the client sees no close frame.
        socket.terminate();
      }, this.#idleTimeoutMs);
      this.#timers.add(timer);
    };
    touch();
    socket.on('message', (data) => {
      conn.messages.push(JSON.parse((data as Buffer).toString('utf8')));
      touch();
    });
    socket.on('ping', () => {
      conn.pings += 1;
      touch();
    });
    socket.on('pong', touch);
    socket.on('close', () => {
      if (timer !== undefined) clearTimeout(timer);
    });
  }
}
