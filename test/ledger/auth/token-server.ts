import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type TokenRequest = { headers: IncomingHttpHeaders; form: URLSearchParams; path: string };
export type TokenReply = { status: number; body: string; delayUntil?: Promise<void> };

/** A real OAuth2 token endpoint on 127.0.0.1 that records requests and answers with `reply`. */
export class TokenServer {
  readonly requests: TokenRequest[] = [];
  reply: (req: TokenRequest, n: number) => TokenReply = (_req, n) => ({
    status: 200,
    body: JSON.stringify({ access_token: `tok-${n}`, token_type: 'Bearer', expires_in: 3600 }),
  });
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<TokenServer> {
    const server = createServer();
    const ts = new TokenServer(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r: TokenRequest = {
          headers: req.headers,
          form: new URLSearchParams(Buffer.concat(chunks).toString('utf8')),
          path: req.url ?? '',
        };
        ts.requests.push(r);
        const reply = ts.reply(r, ts.requests.length);
        const send = (): void => {
          res.writeHead(reply.status, { 'content-type': 'application/json' });
          res.end(reply.body);
        };
        if (reply.delayUntil === undefined) send();
        else void reply.delayUntil.then(send);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return ts;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/oauth/token`;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** A URL on 127.0.0.1 where nothing listens. */
export async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return `http://127.0.0.1:${port}/oauth/token`;
}
