import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AbortError } from '../../../src/core/abort-error.js';
import { LedgerApiError } from '../../../src/ledger/ledger-api-error.js';
import { LedgerTransportError } from '../../../src/ledger/ledger-transport-error.js';
import { LedgerUsageError } from '../../../src/ledger/ledger-usage-error.js';
import { streamContext } from '../../../src/ledger/ws/stream-context.js';
import { WsRequestStream } from '../../../src/ledger/ws/ws-request-stream.js';
import { wsUrl } from '../../../src/ledger/ws/ws-url.js';
import { FakeWsServer } from '../../support/fake-ws-server.js';
import { specValidator } from '../../support/spec-validator.js';
import {
  INVALID_TOKEN_ERROR,
  PRUNED_ERROR,
  UNAUTHENTICATED_ERROR,
  UPDATE_FORMAT,
  checkpointFrame,
  transactionFrame,
} from './ws-fixtures.js';
import {
  StaticAuth,
  TOKEN,
  caught,
  collect,
  recordingLogger,
  sendValid,
  testContext,
} from './ws-test-helpers.js';

const REQUEST = { beginExclusive: 5, updateFormat: UPDATE_FORMAT };

let server: FakeWsServer;
beforeEach(async () => {
  server = await FakeWsServer.start();
});
afterEach(async () => {
  await server.close();
});

describe('WsRequestStream handshake', () => {
  it('puts the token first in the subprotocols and never in an Authorization header', async () => {
    const stream = new WsRequestStream(
      testContext(server.url, { auth: new StaticAuth(TOKEN) }),
      '/v2/updates',
      REQUEST,
    );
    const result = collect(stream);
    const conn = await server.nextConnection();
    // ws joins the offered protocols with "," (browsers use ", "); either way the token is first,
    // which is what Canton needs: it splits on "," without trimming and takes the first
    // entry starting with "jwt.token." (NOTES.md §1.2).
    expect(conn.handshake.protocolHeader).toBe(`jwt.token.${TOKEN},daml.ws.auth`);
    const cantonToken = conn.handshake
      .protocolHeader!.split(',')
      .find((p) => p.startsWith('jwt.token.'))
      ?.slice('jwt.token.'.length);
    expect(cantonToken).toBe(TOKEN);
    expect(conn.handshake.authorization).toBeUndefined();
    expect(conn.handshake.path).toBe('/v2/updates');
    expect(await conn.request()).toEqual(REQUEST);
    conn.close();
    expect(await result).toEqual([]);
    expect(conn.messages).toHaveLength(1);
  });

  it('offers only daml.ws.auth without a token', async () => {
    for (const ctx of [
      testContext(server.url),
      testContext(server.url, { auth: new StaticAuth(undefined) }),
    ]) {
      const result = collect(new WsRequestStream(ctx, '/v2/updates', REQUEST));
      const conn = await server.nextConnection();
      expect(conn.handshake.protocolHeader).toBe('daml.ws.auth');
      conn.close();
      await result;
    }
  });

  it('keeps the path prefix of the base URL', async () => {
    const result = collect(
      new WsRequestStream(testContext(`${server.url}/ledger/api/`), '/v2/updates', REQUEST),
    );
    const conn = await server.nextConnection();
    expect(conn.handshake.path).toBe('/ledger/api/v2/updates');
    conn.close();
    await result;
  });

  it('maps http to ws and https to wss', () => {
    expect(wsUrl('http://h:7575/p', '/v2/updates')).toBe('ws://h:7575/p/v2/updates');
    expect(wsUrl('https://h/p/', '/v2/updates')).toBe('wss://h/p/v2/updates');
    expect(wsUrl('wss://h', '/v2/updates')).toBe('wss://h/v2/updates');
    expect(() => wsUrl('ftp://h', '/v2/updates')).toThrow(LedgerUsageError);
  });
});

describe('WsRequestStream frames', () => {
  it('sends exactly one request and yields every frame in order until a normal close', async () => {
    const stream = new WsRequestStream(testContext(server.url), '/v2/updates', REQUEST);
    const result = collect(stream);
    const conn = await server.nextConnection();
    const request = await conn.request();
    specValidator('asyncapi-3.5').assert('GetUpdatesRequest', request);
    specValidator('asyncapi-3.4').assert('GetUpdatesRequest', request);
    await sendValid(conn, 'JsGetUpdatesResponse', transactionFrame(6));
    await sendValid(conn, 'JsGetUpdatesResponse', checkpointFrame(7));
    conn.close();
    expect(await result).toEqual([transactionFrame(6), checkpointFrame(7)]);
    expect(conn.messages).toHaveLength(1);
  });

  it('delivers earlier frames, then throws the error frame as a LedgerApiError', async () => {
    const stream = new WsRequestStream(testContext(server.url), '/v2/updates', REQUEST);
    const got: unknown[] = [];
    const failure = caught(async () => {
      for await (const f of stream) got.push(f);
    });
    const conn = await server.nextConnection();
    await conn.request();
    await sendValid(conn, 'JsGetUpdatesResponse', transactionFrame(6));
    await sendValid(conn, 'JsCantonError', PRUNED_ERROR);
    const err = await failure;
    expect(got).toEqual([transactionFrame(6)]);
    expect(err).toBeInstanceOf(LedgerApiError);
    const apiError = err as LedgerApiError;
    expect(apiError.code).toBe('PARTICIPANT_PRUNED_DATA_ACCESSED');
    expect(apiError.error.context.earliest_offset).toBe('120');
    expect(apiError.status).toBeUndefined();
    expect(apiError.request).toBe('WS /v2/updates');
    expect((await conn.closed).code).toBe(1000);
  });

  it('drops the cached token after an UNAUTHENTICATED frame', async () => {
    const auth = new StaticAuth(TOKEN);
    const failure = caught(() =>
      collect(new WsRequestStream(testContext(server.url, { auth }), '/v2/updates', REQUEST)),
    );
    const conn = await server.nextConnection();
    await sendValid(conn, 'JsCantonError', UNAUTHENTICATED_ERROR);
    const err = (await failure) as LedgerApiError;
    expect(err.error.grpcCodeValue).toBe(16);
    expect(auth.invalidations).toBe(1);
  });

  it('rejects a frame that is not JSON', async () => {
    const failure = caught(() =>
      collect(new WsRequestStream(testContext(server.url), '/v2/updates', REQUEST)),
    );
    const conn = await server.nextConnection();
    await conn.sendText('<html>proxy error</html>');
    const err = await failure;
    expect(err).toBeInstanceOf(LedgerTransportError);
    expect((err as LedgerTransportError).failure).toBe('bad-response');
  });
});

describe('WsRequestStream failures', () => {
  it('turns a refused handshake with a JsCantonError body into a LedgerApiError', async () => {
    specValidator('openapi-3.5').assert('JsCantonError', INVALID_TOKEN_ERROR);
    server.rejectNext({ status: 403, body: INVALID_TOKEN_ERROR });
    const err = await caught(() =>
      collect(
        new WsRequestStream(
          testContext(server.url, { auth: new StaticAuth(TOKEN) }),
          '/v2/updates',
          REQUEST,
        ),
      ),
    );
    expect(err).toBeInstanceOf(LedgerApiError);
    expect((err as LedgerApiError).status).toBe(403);
    expect((err as LedgerApiError).error.context.ledger_api_error).toBe('invalid token');
  });

  it('turns a refused handshake without one into a bad-response with the status', async () => {
    const auth = new StaticAuth(TOKEN);
    server.rejectNext({ status: 401, body: 'Unauthorized', raw: true });
    server.rejectNext({
      status: 404,
      body: 'The requested resource could not be found.',
      raw: true,
    });
    const ctx = testContext(server.url, { auth });
    const unauthorized = await caught(() =>
      collect(new WsRequestStream(ctx, '/v2/updates', REQUEST)),
    );
    expect(unauthorized).toMatchObject({ failure: 'bad-response', status: 401 });
    expect(auth.invalidations).toBe(1);
    const notFound = await caught(() => collect(new WsRequestStream(ctx, '/v2/updates', REQUEST)));
    expect(notFound).toBeInstanceOf(LedgerTransportError);
    expect(notFound).toMatchObject({ failure: 'bad-response', status: 404 });
    expect((notFound as Error).message).toContain('path prefix');
  });

  it('reports a refused connection as connect', async () => {
    const gone = await FakeWsServer.start();
    const url = gone.url;
    await gone.close();
    const err = await caught(() =>
      collect(new WsRequestStream(testContext(url), '/v2/updates', REQUEST)),
    );
    expect(err).toBeInstanceOf(LedgerTransportError);
    expect((err as LedgerTransportError).failure).toBe('connect');
  });

  it('reports a dropped socket as closed after the frames that arrived', async () => {
    const got: unknown[] = [];
    const failure = caught(async () => {
      for await (const f of new WsRequestStream(testContext(server.url), '/v2/updates', REQUEST))
        got.push(f);
    });
    const conn = await server.nextConnection();
    await sendValid(conn, 'JsGetUpdatesResponse', transactionFrame(6));
    conn.drop();
    const err = await failure;
    expect(got).toEqual([transactionFrame(6)]);
    expect(err).toBeInstanceOf(LedgerTransportError);
    expect((err as LedgerTransportError).failure).toBe('closed');
    expect((err as Error).message).toContain('1006');
  });

  it('treats a close with an error code as closed, not as the end', async () => {
    const failure = caught(() =>
      collect(new WsRequestStream(testContext(server.url), '/v2/updates', REQUEST)),
    );
    const conn = await server.nextConnection();
    conn.close(1011, 'internal error');
    expect(await failure).toMatchObject({ failure: 'closed' });
  });
});

describe('WsRequestStream cancellation', () => {
  it('closes the socket and throws AbortError when the signal aborts', async () => {
    const controller = new AbortController();
    const stream = new WsRequestStream(testContext(server.url), '/v2/updates', REQUEST, {
      signal: controller.signal,
    });
    const got: unknown[] = [];
    const failure = caught(async () => {
      for await (const f of stream) {
        got.push(f);
        controller.abort();
      }
    });
    const conn = await server.nextConnection();
    await sendValid(conn, 'JsGetUpdatesResponse', transactionFrame(6));
    await sendValid(conn, 'JsGetUpdatesResponse', transactionFrame(7));
    expect(await failure).toBeInstanceOf(AbortError);
    expect(got).toHaveLength(1);
    expect((await conn.closed).code).toBe(1000);
  });

  it('aborts a stream that is waiting for frames', async () => {
    const controller = new AbortController();
    const failure = caught(() =>
      collect(
        new WsRequestStream(testContext(server.url), '/v2/updates', REQUEST, {
          signal: controller.signal,
        }),
      ),
    );
    const conn = await server.nextConnection();
    await conn.request();
    controller.abort();
    expect(await failure).toBeInstanceOf(AbortError);
    await conn.closed;
    expect(conn.isOpen).toBe(false);
  });

  it('does not connect at all when already aborted', async () => {
    const failure = caught(() =>
      collect(
        new WsRequestStream(testContext(server.url), '/v2/updates', REQUEST, {
          signal: AbortSignal.abort(),
        }),
      ),
    );
    expect(await failure).toBeInstanceOf(AbortError);
    expect(server.handshakes).toHaveLength(0);
  });

  it('closes the socket when the consumer breaks', async () => {
    const stream = new WsRequestStream(testContext(server.url), '/v2/updates', REQUEST);
    const reading = (async () => {
      for await (const _ of stream) break;
    })();
    const conn = await server.nextConnection();
    await sendValid(conn, 'JsGetUpdatesResponse', transactionFrame(6));
    await reading;
    expect((await conn.closed).code).toBe(1000);
    expect(await stream.next()).toEqual({ value: undefined, done: true });
  });
});

describe('WsRequestStream backpressure', () => {
  it('keeps the buffer bounded for a slow consumer by pausing the socket', async () => {
    const total = 5_000;
    const highWaterMark = 16;
    const stream = new WsRequestStream(testContext(server.url), '/v2/updates', REQUEST, {
      highWaterMark,
    });
    const first = stream.next();
    const conn = await server.nextConnection();
    await conn.request();
    const frames = Array.from({ length: total }, (_, i) => transactionFrame(6 + i));
    specValidator('asyncapi-3.5').assert('JsGetUpdatesResponse', frames[0]);
    void conn.sendAll(frames).catch(() => undefined);
    const frameBytes = JSON.stringify(frames[0]).length;
    // Pausing stops reading the socket; what one 64 KiB read already holds still arrives.
    const bound = highWaterMark + Math.ceil((2 * 65_536) / frameBytes);
    let seen = (await first).done === false ? 1 : 0;
    const deadline = Date.now() + 15_000;
    while (seen < total && Date.now() < deadline) {
      // A slow consumer: every 250 frames it stalls long enough for the socket to flood it.
      if (seen % 250 === 0) await new Promise((r) => setTimeout(r, 15));
      const r = await stream.next();
      if (r.done === true) break;
      seen += 1;
      expect(stream.buffered).toBeLessThanOrEqual(bound);
    }
    expect(seen).toBe(total);
    expect(stream.peakBuffered).toBeGreaterThanOrEqual(highWaterMark);
    expect(stream.peakBuffered).toBeLessThanOrEqual(bound);
    conn.close();
    expect(await stream.next()).toEqual({ value: undefined, done: true });
  });
});

describe('WsRequestStream secrets', () => {
  it('never puts the token in errors or log lines', async () => {
    const logger = recordingLogger();
    const auth = new StaticAuth(TOKEN);
    const ctx = testContext(server.url, { auth, logger });
    const errors: unknown[] = [];
    server.rejectNext({ status: 403, body: INVALID_TOKEN_ERROR });
    server.rejectNext({ status: 401, body: 'Unauthorized', raw: true });
    errors.push(await caught(() => collect(new WsRequestStream(ctx, '/v2/updates', REQUEST))));
    errors.push(await caught(() => collect(new WsRequestStream(ctx, '/v2/updates', REQUEST))));
    for (const script of ['error', 'drop'] as const) {
      const failure = caught(() => collect(new WsRequestStream(ctx, '/v2/updates', REQUEST)));
      const conn = await server.nextConnection();
      if (script === 'error') await sendValid(conn, 'JsCantonError', UNAUTHENTICATED_ERROR);
      else conn.drop();
      errors.push(await failure);
    }
    expect(errors).toHaveLength(4);
    for (const err of errors) {
      expect(err).toBeInstanceOf(Error);
      const e = err as Error;
      const rendered = [
        String(e),
        e.stack,
        inspect(e, { depth: 10, showHidden: true }),
        JSON.stringify(e),
      ];
      for (const text of rendered) expect(text).not.toContain(TOKEN);
    }
    expect(logger.lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(logger.lines)).not.toContain(TOKEN);
  });
});

describe('WsRequestStream TLS', () => {
  let dir: string;
  let tlsServer: FakeWsServer | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerbot-ws-tls-'));
  });
  afterEach(async () => {
    await tlsServer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('connects over wss with the CA from the TLS options, and refuses without it', async () => {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          keyFile,
          '-out',
          certFile,
          '-days',
          '1',
          '-subj',
          '/CN=127.0.0.1',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
        ],
        { stdio: 'ignore' },
      );
    } catch {
      console.warn('openssl is not available; skipping the TLS test');
      return;
    }
    tlsServer = await FakeWsServer.start({
      tls: { key: readFileSync(keyFile), cert: readFileSync(certFile) },
    });
    expect(tlsServer.url.startsWith('https://')).toBe(true);
    const ctx = await streamContext({ url: tlsServer.url, tls: { caFile: certFile } });
    const result = collect(new WsRequestStream(ctx, '/v2/updates', REQUEST));
    const conn = await tlsServer.nextConnection();
    await sendValid(conn, 'JsGetUpdatesResponse', checkpointFrame(9));
    conn.close();
    expect(await result).toEqual([checkpointFrame(9)]);

    const untrusted = await caught(async () =>
      collect(
        new WsRequestStream(await streamContext({ url: tlsServer!.url }), '/v2/updates', REQUEST),
      ),
    );
    expect(untrusted).toMatchObject({ failure: 'connect' });
  });

  it('names an unreadable TLS file and fills the defaults', async () => {
    await expect(
      streamContext({ url: 'https://127.0.0.1:1', tls: { caFile: join(dir, 'missing.pem') } }),
    ).rejects.toThrow(/missing\.pem/);
    const ctx = await streamContext({ url: 'http://127.0.0.1:7575/prefix/' });
    expect(ctx.url).toBe('http://127.0.0.1:7575/prefix');
    expect(ctx.auth).toBeUndefined();
    expect(typeof ctx.clock.now()).toBe('number');
    expect(ctx.random.next()).toBeLessThan(1);
  });
});
