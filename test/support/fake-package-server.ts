import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sha256Hex } from '../../src/core/sha256-hex.js';

/**
 * A participant's package service and nothing else, on 127.0.0.1: `GET /v2/packages` lists the
 * payloads it holds and `GET /v2/packages/{id}` sends one (octet-stream, `Canton-Package-Hash`),
 * as Canton does; an unknown id is Canton's 404 PACKAGE_NOT_FOUND. It counts what it was asked,
 * so a test can prove which packages were downloaded. `tamper` makes it send other bytes for an
 * id (a proxy gone wrong).
 */
export class FakePackageServer {
  readonly url: string;
  /** Payloads by package id (the id is their sha256). */
  readonly payloads = new Map<string, Uint8Array>();
  /** Ids asked for with `GET /v2/packages/{id}`, in order. */
  readonly downloads: string[] = [];
  lists = 0;
  readonly tampered = new Map<string, Uint8Array>();
  /** Answer every request with this status and a Canton error (e.g. 503), when set. */
  failWith: number | undefined;
  readonly #server: Server;

  private constructor(server: Server, url: string) {
    this.#server = server;
    this.url = url;
  }

  static async start(payloads: Iterable<Uint8Array> = []): Promise<FakePackageServer> {
    const handler: { self?: FakePackageServer } = {};
    const server = createServer((req, res) => handler.self?.handle(req.url ?? '', res));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const self = new FakePackageServer(
      server,
      `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    );
    handler.self = self;
    for (const p of payloads) self.add(p);
    return self;
  }

  /** Adds a package (an upload); returns its id. */
  add(payload: Uint8Array): string {
    const id = sha256Hex(payload);
    this.payloads.set(id, payload);
    return id;
  }

  private handle(url: string, res: ServerResponse): void {
    if (this.failWith !== undefined) {
      res.writeHead(this.failWith, { 'content-type': 'application/json' });
      res.end(cantonError('SERVICE_NOT_RUNNING', 1, 14, 'the participant is starting'));
      return;
    }
    if (url === '/v2/packages') {
      this.lists += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ packageIds: [...this.payloads.keys()] }));
      return;
    }
    const m = /^\/v2\/packages\/([^/?]+)$/.exec(url);
    const id = m?.[1];
    if (id === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    this.downloads.push(id);
    const payload = this.payloads.get(id);
    if (payload === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(cantonError('PACKAGE_NOT_FOUND', 11, 5, `Package not found: ${id}`));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'canton-package-hash': id });
    res.end(this.tampered.get(id) ?? payload);
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

function cantonError(code: string, category: number, grpc: number, cause: string): string {
  return JSON.stringify({
    code,
    cause,
    correlationId: 'c-1',
    traceId: 't-1',
    context: { category: String(category) },
    resources: [],
    errorCategory: category,
    grpcCodeValue: grpc,
  });
}
