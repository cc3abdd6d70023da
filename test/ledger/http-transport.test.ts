import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AbortError } from '../../src/core/abort-error.js';
import type { AuthProvider } from '../../src/ledger/auth/auth-provider.js';
import { createHttpTransport, type HttpTransport } from '../../src/ledger/http-transport.js';
import { LedgerApiError } from '../../src/ledger/ledger-api-error.js';
import type { LedgerConnectionOptions } from '../../src/ledger/ledger-connection.js';
import { LedgerTransportError } from '../../src/ledger/ledger-transport-error.js';
import { LedgerUsageError } from '../../src/ledger/ledger-usage-error.js';
import { MockLedger, ORIGIN, specResponse } from './mock-ledger.js';
import { cantonError } from './samples.js';

const TLS_DIR = fileURLToPath(new URL('../fixtures/tls/', import.meta.url));
const SECRET = 'secret-token-9f8e7d';

/** A tiny AuthProvider handing out `${prefix}-1`, `${prefix}-2`, ... after each invalidate. */
function countingAuth(prefix = SECRET): AuthProvider & { invalidations: number } {
  let n = 1;
  const auth = {
    invalidations: 0,
    token: () => Promise.resolve(`${prefix}-${n}`),
    invalidate: () => {
      auth.invalidations += 1;
      n += 1;
    },
    close: () => Promise.resolve(),
  };
  return auth;
}

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('http transport error mapping (MockAgent)', () => {
  let m: MockLedger;
  let t: HttpTransport;

  beforeEach(async () => {
    m = new MockLedger();
    t = await createHttpTransport({ url: ORIGIN, dispatcher: m.agent });
  });
  afterEach(async () => {
    await t.close();
    await m.close();
  });

  it.each([
    [409, 'DUPLICATE_COMMAND', 10, 6, { definite_answer: 'true' }, true],
    [409, 'SUBMISSION_ALREADY_IN_FLIGHT', 2, 10, {}, undefined],
    [404, 'USER_NOT_FOUND', 11, 5, { definite_answer: 'false' }, false],
    [400, 'INVALID_ARGUMENT', 8, 3, {}, undefined],
  ] as const)(
    'a %i JsCantonError %s becomes a LedgerApiError',
    async (status, code, category, grpc, context, definite) => {
      const body = specResponse(
        'POST',
        '/v2/commands/async/submit',
        status,
        cantonError(code, category, grpc, `${code} happened`, context),
      );
      m.replyJson(status, body);
      const err = await caught(t.request('POST', '/v2/commands/async/submit', { body: {} }));
      expect(err).toBeInstanceOf(LedgerApiError);
      const e = err as LedgerApiError;
      expect(e.code).toBe(code);
      expect(e.status).toBe(status);
      expect(e.request).toBe('POST /v2/commands/async/submit');
      expect(e.error.errorCategory).toBe(category);
      expect(e.error.grpcCodeValue).toBe(grpc);
      expect(e.definiteAnswer).toBe(definite);
      expect(e.message).toContain('POST /v2/commands/async/submit');
    },
  );

  it('a JsCantonError with a 2xx-less odd status (413 list limit) is still a LedgerApiError', async () => {
    m.replyJson(413, cantonError('JSON_API_MAXIMUM_LIST_ELEMENTS_NUMBER_REACHED', 2, 10, 'x'));
    const err = await caught(t.request('POST', '/v2/updates', { body: {} }));
    expect(err).toMatchObject({
      code: 'JSON_API_MAXIMUM_LIST_ELEMENTS_NUMBER_REACHED',
      status: 413,
    });
  });

  it('a plain-text 400 becomes LedgerApiError.fromPlainText', async () => {
    m.replyText(400, 'Invalid value for: body (Missing required field at commandId)\n');
    const err = await caught(t.request('POST', '/v2/commands/async/submit', { body: {} }));
    expect(err).toBeInstanceOf(LedgerApiError);
    expect(err).toMatchObject({
      code: 'INVALID_REQUEST_BODY',
      status: 400,
      request: 'POST /v2/commands/async/submit',
      error: { cause: 'Invalid value for: body (Missing required field at commandId)' },
    });
  });

  it('an HTML 502 from a proxy is a bad-response transport error with the status', async () => {
    m.replyText(502, '<html><body>Bad Gateway</body></html>', 'text/html');
    const err = await caught(t.request('GET', '/v2/state/ledger-end'));
    expect(err).toBeInstanceOf(LedgerTransportError);
    expect(err).toMatchObject({
      failure: 'bad-response',
      status: 502,
      code: 'LEDGER_TRANSPORT_BAD_RESPONSE',
    });
    expect((err as Error).message).toContain('GET /v2/state/ledger-end');
    expect((err as Error).message).toContain('502');
  });

  it('a 500 with JSON that is not a JsCantonError is a bad-response', async () => {
    m.replyJson(500, { error: 'boom' });
    await expect(t.request('GET', '/v2/version')).rejects.toMatchObject({
      failure: 'bad-response',
      status: 500,
    });
  });

  it('a 200 that is not JSON is a bad-response', async () => {
    m.replyText(200, '<html>login page</html>', 'text/html');
    await expect(t.request('GET', '/v2/version')).rejects.toMatchObject({
      failure: 'bad-response',
      status: 200,
    });
  });

  it('a 200 with invalid JSON is a bad-response', async () => {
    m.replyText(200, '{"offset": ', 'application/json');
    await expect(t.request('GET', '/v2/state/ledger-end')).rejects.toMatchObject({
      failure: 'bad-response',
    });
  });

  it('returns text for accept: text and sends no body or content-type on GET', async () => {
    m.replyText(200, 'hello');
    await expect(t.request('GET', '/readyz', { accept: 'text' })).resolves.toBe('hello');
    expect(m.calls[0]?.headers['content-type']).toBeUndefined();
    expect(m.calls[0]?.headers.authorization).toBeUndefined();
  });

  it('encodes query values, repeats arrays and skips undefined', async () => {
    m.replyJson(200, {});
    await t.request('GET', '/v2/x', { query: { a: 'p::1 2', b: [1, 2], c: undefined, d: true } });
    const q = m.calls[0]?.query;
    expect(q?.get('a')).toBe('p::1 2');
    expect(q?.getAll('b')).toEqual(['1', '2']);
    expect(q?.has('c')).toBe(false);
    expect(q?.get('d')).toBe('true');
  });

  it('an already aborted signal fails with AbortError before any request', async () => {
    const ctl = new AbortController();
    ctl.abort();
    await expect(t.request('GET', '/v2/version', { signal: ctl.signal })).rejects.toBeInstanceOf(
      AbortError,
    );
    expect(m.calls).toHaveLength(0);
  });
});

describe('http transport auth', () => {
  let m: MockLedger;
  afterEach(async () => {
    await m.close();
  });

  it('sends the bearer token; on 401 invalidates and retries once with a fresh token', async () => {
    m = new MockLedger();
    const auth = countingAuth('tok');
    const t = await createHttpTransport({ url: ORIGIN, dispatcher: m.agent, auth });
    m.replyJson(401, cantonError('NA', -1, 16, 'A security-sensitive error has been received'));
    m.replyJson(200, { offset: 5 });
    await expect(t.request('GET', '/v2/state/ledger-end')).resolves.toEqual({ offset: 5 });
    expect(m.calls.map((c) => c.headers.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-2']);
    expect(auth.invalidations).toBe(1);
    await t.close();
  });

  it('a second 401 is an error after exactly two attempts', async () => {
    m = new MockLedger();
    const auth = countingAuth('tok');
    const t = await createHttpTransport({ url: ORIGIN, dispatcher: m.agent, auth });
    m.replyJson(401, cantonError('NA', -1, 16, 'unauthenticated'));
    m.replyJson(401, cantonError('NA', -1, 16, 'unauthenticated'));
    m.replyJson(200, { offset: 5 });
    const err = await caught(t.request('POST', '/v2/commands/async/submit', { body: { a: 1 } }));
    expect(err).toMatchObject({ status: 401, code: 'NA' });
    expect(m.calls).toHaveLength(2);
    expect(m.calls[1]?.body).toEqual({ a: 1 });
    expect(auth.invalidations).toBe(2);
    await t.close();
  });

  it('without an auth provider sends no Authorization header and does not retry a 401', async () => {
    m = new MockLedger();
    const t = await createHttpTransport({ url: ORIGIN, dispatcher: m.agent });
    m.replyJson(401, cantonError('NA', -1, 16, 'unauthenticated'));
    await expect(t.request('GET', '/v2/version')).rejects.toMatchObject({ status: 401 });
    expect(m.calls).toHaveLength(1);
    expect(m.calls[0]?.headers.authorization).toBeUndefined();
    await t.close();
  });

  it('auth provider errors keep their type', async () => {
    m = new MockLedger();
    const boom = new Error('idp unreachable');
    const auth: AuthProvider = {
      token: () => Promise.reject(boom),
      invalidate: () => undefined,
      close: () => Promise.resolve(),
    };
    const t = await createHttpTransport({ url: ORIGIN, dispatcher: m.agent, auth });
    await expect(t.request('GET', '/v2/version')).rejects.toBe(boom);
    expect(m.calls).toHaveLength(0);
    await t.close();
  });

  it('never puts the token in an error message, even when the server echoes it', async () => {
    m = new MockLedger();
    const t = await createHttpTransport({ url: ORIGIN, dispatcher: m.agent, auth: countingAuth() });
    const token = `${SECRET}-1`;
    m.replyJson(400, cantonError('INVALID_ARGUMENT', 8, 3, `bad token ${token}`, { hdr: token }));
    m.replyText(400, `Invalid value for: header Authorization (Bearer ${token})`);
    m.replyText(502, `<html>upstream saw Authorization: Bearer ${token}</html>`, 'text/html');
    m.replyText(200, `<html>${token}</html>`, 'text/html');
    m.replyJson(500, { echoed: token });
    const errors: unknown[] = [];
    for (let i = 0; i < 5; i++) errors.push(await caught(t.request('GET', '/v2/version')));
    expect(m.calls).toHaveLength(5);
    expect(m.calls[0]?.headers.authorization).toBe(`Bearer ${token}`);
    for (const err of errors) {
      const e = err as Error & { error?: unknown };
      expect(e).toBeInstanceOf(Error);
      for (const text of [e.message, String(e), e.stack ?? '', JSON.stringify(e.error ?? {})]) {
        expect(text).not.toContain(SECRET);
      }
    }
    expect((errors[0] as Error).message).toContain('[redacted]');
    await t.close();
  });
});

describe('http transport over real sockets on 127.0.0.1', () => {
  const servers: Server[] = [];
  const transports: HttpTransport[] = [];

  async function listen(
    handler: (req: IncomingMessage, res: ServerResponse) => void,
  ): Promise<string> {
    const server = createServer(handler);
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async function transport(options: LedgerConnectionOptions): Promise<HttpTransport> {
    const t = await createHttpTransport(options);
    transports.push(t);
    return t;
  }

  afterEach(async () => {
    for (const t of transports.splice(0)) await t.close();
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  });

  it('talks JSON to a real server', async () => {
    const url = await listen((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ offset: 3, path: req.url }));
    });
    const t = await transport({ url });
    await expect(t.request('GET', '/v2/state/ledger-end')).resolves.toEqual({
      offset: 3,
      path: '/v2/state/ledger-end',
    });
  });

  it('a refused connection is a connect failure', async () => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const t = await transport({ url: `http://127.0.0.1:${port}` });
    const err = await caught(t.request('GET', '/v2/version'));
    expect(err).toBeInstanceOf(LedgerTransportError);
    expect(err).toMatchObject({ failure: 'connect', request: 'GET /v2/version' });
    expect((err as Error).message).toContain('GET /v2/version');
  });

  it('a socket destroyed mid-request is a reset', async () => {
    const url = await listen((req) => {
      req.socket.destroy();
    });
    const t = await transport({ url });
    const err = await caught(t.request('POST', '/v2/commands/async/submit', { body: {} }));
    expect(err).toMatchObject({ failure: 'reset', code: 'LEDGER_TRANSPORT_RESET' });
  });

  it('a socket destroyed after the headers (mid-body) is a reset', async () => {
    const url = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"offset":');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const t = await transport({ url });
    await expect(t.request('GET', '/v2/state/ledger-end')).rejects.toMatchObject({
      failure: 'reset',
    });
  });

  it('no answer within timeoutMs is a timeout', async () => {
    const url = await listen(() => undefined);
    const t = await transport({ url, requestTimeoutMs: 10_000 });
    const started = Date.now();
    const err = await caught(t.request('GET', '/v2/version', { timeoutMs: 200 }));
    expect(err).toMatchObject({ failure: 'timeout', code: 'LEDGER_TRANSPORT_TIMEOUT' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('the connection requestTimeoutMs applies by default', async () => {
    const url = await listen(() => undefined);
    const t = await transport({ url, requestTimeoutMs: 150 });
    await expect(t.request('GET', '/v2/version')).rejects.toMatchObject({ failure: 'timeout' });
  });

  it('a caller abort mid-request is an AbortError', async () => {
    const url = await listen(() => undefined);
    const t = await transport({ url });
    const ctl = new AbortController();
    const p = t.request('GET', '/v2/version', { signal: ctl.signal });
    setTimeout(() => ctl.abort(), 50);
    const err = await caught(p);
    expect(err).toBeInstanceOf(AbortError);
    expect((err as Error).message).toContain('GET /v2/version');
  });

  it('one caller signal shared by many requests aborts them all, without a listener per request', async () => {
    const url = await listen(() => undefined);
    const t = await transport({ url });
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      const ctl = new AbortController();
      const calls = Array.from({ length: 20 }, () =>
        caught(t.request('GET', '/v2/version', { signal: ctl.signal })),
      );
      setTimeout(() => ctl.abort(), 50);
      const errors = await Promise.all(calls);
      for (const err of errors) expect(err).toBeInstanceOf(AbortError);
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('reuses keep-alive connections for sequential calls', async () => {
    const sockets = new Set<Socket>();
    const url = await listen((req, res) => {
      sockets.add(req.socket);
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
    const t = await transport({ url });
    for (let i = 0; i < 4; i++) await t.request('GET', '/v2/version');
    // The pool may open a second connection while the first is settling, never one per call.
    expect(sockets.size).toBeLessThan(4);
  });

  it('close is idempotent and later calls fail with ILLEGAL_STATE', async () => {
    const url = await listen((_req, res) => res.end('{}'));
    const t = await transport({ url });
    await Promise.all([t.close(), t.close()]);
    await t.close();
    await expect(t.request('GET', '/v2/version')).rejects.toMatchObject({ code: 'ILLEGAL_STATE' });
  });

  it('rejects URLs with credentials or other schemes', async () => {
    await expect(createHttpTransport({ url: 'http://u:p@127.0.0.1:1' })).rejects.toBeInstanceOf(
      LedgerUsageError,
    );
    await expect(createHttpTransport({ url: 'ws://127.0.0.1:1' })).rejects.toBeInstanceOf(
      LedgerUsageError,
    );
    await expect(createHttpTransport({ url: 'not a url' })).rejects.toBeInstanceOf(
      LedgerUsageError,
    );
    await expect(
      createHttpTransport({ url: 'http://127.0.0.1:1', requestTimeoutMs: 0 }),
    ).rejects.toBeInstanceOf(LedgerUsageError);
  });
});

describe('http transport with TLS on 127.0.0.1', () => {
  const tlsFile = (name: string): string => TLS_DIR + name;
  const servers: Server[] = [];
  const transports: HttpTransport[] = [];

  async function listenTls(mutual: boolean): Promise<{ port: number; peers: string[] }> {
    const peers: string[] = [];
    const server = createHttpsServer(
      {
        key: readFileSync(tlsFile('server.key')),
        cert: readFileSync(tlsFile('server.crt')),
        ...(mutual
          ? { ca: readFileSync(tlsFile('ca.crt')), requestCert: true, rejectUnauthorized: true }
          : {}),
      },
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        peers.push(typeof peer.subject?.CN === 'string' ? peer.subject.CN : '');
        res.setHeader('content-type', 'application/json');
        res.end('{"ok":true}');
      },
    );
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { port: (server.address() as AddressInfo).port, peers };
  }

  async function transport(options: LedgerConnectionOptions): Promise<HttpTransport> {
    const t = await createHttpTransport(options);
    transports.push(t);
    return t;
  }

  afterEach(async () => {
    for (const t of transports.splice(0)) await t.close();
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  });

  it('trusts the server through caFile', async () => {
    const { port } = await listenTls(false);
    const tls = { caFile: tlsFile('ca.crt') };
    const byIp = await transport({ url: `https://127.0.0.1:${port}`, tls });
    await expect(byIp.request('GET', '/v2/version')).resolves.toEqual({ ok: true });
  });

  it('a server signed by an untrusted CA is a connect failure', async () => {
    const { port } = await listenTls(false);
    const t = await transport({
      url: `https://127.0.0.1:${port}`,
      tls: { caFile: tlsFile('other-ca.crt') },
    });
    const err = await caught(t.request('GET', '/v2/version'));
    expect(err).toMatchObject({ failure: 'connect' });
  });

  it('without a CA the self-signed chain is rejected unless rejectUnauthorized is false', async () => {
    const { port } = await listenTls(false);
    const strict = await transport({ url: `https://127.0.0.1:${port}` });
    await expect(strict.request('GET', '/v2/version')).rejects.toMatchObject({
      failure: 'connect',
    });
    const lax = await transport({
      url: `https://127.0.0.1:${port}`,
      tls: { rejectUnauthorized: false },
    });
    await expect(lax.request('GET', '/v2/version')).resolves.toEqual({ ok: true });
  });

  it('presents the client certificate for mutual TLS', async () => {
    const { port, peers } = await listenTls(true);
    const t = await transport({
      url: `https://127.0.0.1:${port}`,
      tls: {
        caFile: tlsFile('ca.crt'),
        certFile: tlsFile('client.crt'),
        keyFile: tlsFile('client.key'),
      },
    });
    await expect(t.request('GET', '/v2/version')).resolves.toEqual({ ok: true });
    expect(peers).toEqual(['ledgerbot-client']);
  });

  it('a mutual-TLS server refuses a client without a certificate', async () => {
    const { port, peers } = await listenTls(true);
    const t = await transport({
      url: `https://127.0.0.1:${port}`,
      tls: { caFile: tlsFile('ca.crt') },
    });
    const err = await caught(t.request('GET', '/v2/version'));
    expect(err).toBeInstanceOf(LedgerTransportError);
    // TLS 1.3 reports the refusal after the client finished its handshake, so undici may see a
    // reset of a request it already wrote rather than a failed connect.
    expect(['connect', 'reset']).toContain((err as LedgerTransportError).failure);
    expect(peers).toEqual([]);
  });

  it('a missing TLS file fails create() with a message naming the file', async () => {
    const err = await caught(
      createHttpTransport({ url: 'https://127.0.0.1:1', tls: { caFile: tlsFile('nope.crt') } }),
    );
    expect(err).toBeInstanceOf(LedgerUsageError);
    expect((err as Error).message).toContain('nope.crt');
  });

  it('certFile without keyFile is refused', async () => {
    await expect(
      createHttpTransport({ url: 'https://127.0.0.1:1', tls: { certFile: tlsFile('client.crt') } }),
    ).rejects.toBeInstanceOf(LedgerUsageError);
  });
});
