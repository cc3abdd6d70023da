import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AbortError } from '../../../src/core/abort-error.js';
import { backoffDelay, type BackoffPolicy } from '../../../src/core/backoff.js';
import { silentLogger } from '../../../src/core/logger.js';
import { SeededRandom } from '../../../src/core/seeded-random.js';
import { LedgerApiError } from '../../../src/ledger/ledger-api-error.js';
import { LedgerTransportError } from '../../../src/ledger/ledger-transport-error.js';
import { decodeUpdate, streamUpdates } from '../../../src/ledger/ws/update-stream.js';
import { FakeWsServer } from '../../support/fake-ws-server.js';
import { specValidator } from '../../support/spec-validator.js';
import {
  PRUNED_ERROR,
  SHUTDOWN_ERROR,
  UPDATE_FORMAT,
  checkpointFrame,
  reassignmentFrame,
  topologyFrame,
  transactionFrame,
} from './ws-fixtures.js';
import { waitFor } from '../../support/wait-for.js';
import {
  AutoClock,
  StaticAuth,
  TOKEN,
  drain,
  recordingLogger,
  sendValid,
  testContext,
} from './ws-test-helpers.js';

const POLICY: BackoffPolicy = { initialMs: 200, maxMs: 5_000 };

let server: FakeWsServer;
/** Stops streams a test leaves running, so they do not keep reconnecting to a closed server. */
let stop: AbortController;
beforeEach(async () => {
  server = await FakeWsServer.start();
  stop = new AbortController();
});
afterEach(async () => {
  stop.abort();
  await server.close();
});

function assertRequest(msg: unknown): void {
  specValidator('asyncapi-3.5').assert('GetUpdatesRequest', msg);
  specValidator('asyncapi-3.4').assert('GetUpdatesRequest', msg);
  specValidator('openapi-3.5').assert('GetUpdatesRequest', msg);
}

describe('streamUpdates', () => {
  it('sends beginExclusive and updateFormat and decodes every update kind', async () => {
    const s = streamUpdates(
      testContext(server.url),
      { beginExclusive: 5, updateFormat: UPDATE_FORMAT },
      { signal: stop.signal },
    );
    const { got } = drain(s);
    const conn = await server.nextConnection();
    expect(conn.handshake.path).toBe('/v2/updates');
    const request = await conn.request();
    assertRequest(request);
    expect(request).toEqual({ beginExclusive: 5, updateFormat: UPDATE_FORMAT });
    await sendValid(conn, 'JsGetUpdatesResponse', transactionFrame(6));
    await sendValid(conn, 'JsGetUpdatesResponse', reassignmentFrame(7));
    await sendValid(conn, 'JsGetUpdatesResponse', topologyFrame(8));
    await sendValid(conn, 'JsGetUpdatesResponse', checkpointFrame(9));
    await waitFor(
      () => got.length,
      (n) => n === 4,
      2_000,
      'got: 4',
    );
    expect(got.map((e) => [e.kind, e.offset])).toEqual([
      ['transaction', 6],
      ['reassignment', 7],
      ['topology', 8],
      ['checkpoint', 9],
    ]);
    const [t, r, p, c] = got;
    expect(t?.kind === 'transaction' && t.transaction.updateId).toBe(
      (transactionFrame(6) as { update: { Transaction: { value: { updateId: string } } } }).update
        .Transaction.value.updateId,
    );
    expect(t?.kind === 'transaction' && t.transaction.events).toHaveLength(2);
    expect(r?.kind === 'reassignment' && r.reassignment.events).toHaveLength(1);
    expect(p?.kind === 'topology' && p.topology.events).toHaveLength(1);
    expect(c?.kind === 'checkpoint' && c.checkpoint.synchronizerTimes).toHaveLength(1);
    expect(s.lastOffset).toBe(9);
  });

  it('resumes after a dropped socket from the last offset, a checkpoint included', async () => {
    const clock = new AutoClock();
    const reconnects: number[] = [];
    const s = streamUpdates(
      testContext(server.url, { clock, seed: 3, auth: new StaticAuth(TOKEN) }),
      { beginExclusive: 5, updateFormat: UPDATE_FORMAT },
      { backoff: POLICY, onReconnect: (attempt) => reconnects.push(attempt), signal: stop.signal },
    );
    const { got } = drain(s);
    const first = await server.nextConnection();
    await sendValid(first, 'JsGetUpdatesResponse', transactionFrame(6));
    await sendValid(first, 'JsGetUpdatesResponse', checkpointFrame(11));
    await waitFor(
      () => got.length,
      (n) => n === 2,
      2_000,
      'got: 2',
    );
    first.drop();
    const second = await server.nextConnection();
    const request = await second.request();
    assertRequest(request);
    expect(request).toEqual({ beginExclusive: 11, updateFormat: UPDATE_FORMAT });
    expect(second.handshake.protocolHeader).toBe(`jwt.token.${TOKEN},daml.ws.auth`);
    // The next drop happens before anything arrives: the attempt count goes up.
    second.drop();
    const third = await server.nextConnection();
    expect(await third.request()).toEqual({ beginExclusive: 11, updateFormat: UPDATE_FORMAT });
    await sendValid(third, 'JsGetUpdatesResponse', transactionFrame(12));
    await waitFor(
      () => got.length,
      (n) => n === 3,
      2_000,
      'got: 3',
    );
    expect(got.map((e) => e.offset)).toEqual([6, 11, 12]);
    const twin = new SeededRandom(3);
    expect(clock.sleeps).toEqual([backoffDelay(POLICY, 0, twin), backoffDelay(POLICY, 1, twin)]);
    expect(reconnects).toEqual([1, 2]);
  });

  it('reports every socket opening and closing, with or without traffic', async () => {
    const events: string[] = [];
    const s = streamUpdates(
      testContext(server.url, { clock: new AutoClock() }),
      { beginExclusive: 5, updateFormat: UPDATE_FORMAT },
      {
        backoff: POLICY,
        signal: stop.signal,
        onOpen: () => events.push('open'),
        onClose: () => events.push('close'),
      },
    );
    const { ended } = drain(s);
    const first = await server.nextConnection();
    await first.request();
    // Open although nothing has arrived yet: the stream is connected on an idle ledger.
    await waitFor(
      () => events.length,
      (n) => n === 1,
      2_000,
      'events: 1',
    );
    expect(events).toEqual(['open']);
    first.close(1000); // the server ends the stream normally: it reconnects
    const second = await server.nextConnection();
    await second.request();
    await waitFor(
      () => events.length,
      (n) => n === 3,
      2_000,
      'events: 3',
    );
    second.drop();
    const third = await server.nextConnection();
    await third.request();
    await waitFor(
      () => events.length,
      (n) => n === 5,
      2_000,
      'events: 5',
    );
    expect(events).toEqual(['open', 'close', 'open', 'close', 'open']);
    stop.abort();
    expect((await ended).error).toBeInstanceOf(AbortError);
    await waitFor(
      () => events.length,
      (n) => n === 6,
      2_000,
      'events: 6',
    );
    expect(events).toEqual(['open', 'close', 'open', 'close', 'open', 'close']);
  });

  it('reports no opening for a socket that never opened', async () => {
    const events: string[] = [];
    server.rejectNext({ status: 404, body: 'not here' });
    const s = streamUpdates(
      testContext(server.url),
      { beginExclusive: 5, updateFormat: UPDATE_FORMAT },
      {
        signal: stop.signal,
        onOpen: () => events.push('open'),
        onClose: () => events.push('close'),
      },
    );
    const { ended } = drain(s);
    expect((await ended).error).toBeInstanceOf(LedgerTransportError);
    expect(events).toEqual([]);
  });

  it('resumes after a retryable error frame and throws a final one', async () => {
    const logger = recordingLogger();
    const s = streamUpdates(
      testContext(server.url, { logger, auth: new StaticAuth(TOKEN) }),
      { beginExclusive: 5, updateFormat: UPDATE_FORMAT },
      { backoff: POLICY, signal: stop.signal },
    );
    const { got, ended } = drain(s);
    const first = await server.nextConnection();
    await sendValid(first, 'JsGetUpdatesResponse', transactionFrame(6));
    await sendValid(first, 'JsCantonError', SHUTDOWN_ERROR);
    const second = await server.nextConnection();
    expect(await second.request()).toMatchObject({ beginExclusive: 6 });
    await sendValid(second, 'JsGetUpdatesResponse', transactionFrame(7));
    await sendValid(second, 'JsCantonError', PRUNED_ERROR);
    const { error } = await ended;
    expect(got.map((e) => e.offset)).toEqual([6, 7]);
    expect(error).toBeInstanceOf(LedgerApiError);
    expect((error as LedgerApiError).code).toBe('PARTICIPANT_PRUNED_DATA_ACCESSED');
    expect(server.connections).toHaveLength(2);
    const warn = logger.lines.find((l) => l.msg === 'stream interrupted, reconnecting');
    expect(warn?.fields).toMatchObject({ errorCode: 'ABORTED_DUE_TO_SHUTDOWN', offset: 6 });
    expect(JSON.stringify(logger.lines)).not.toContain(TOKEN);
  });

  it('resumes an open-ended stream that the server closed normally (idle timeout)', async () => {
    const s = streamUpdates(
      testContext(server.url),
      { beginExclusive: 5, updateFormat: UPDATE_FORMAT },
      { signal: stop.signal },
    );
    const { got } = drain(s);
    const first = await server.nextConnection();
    await sendValid(first, 'JsGetUpdatesResponse', checkpointFrame(8));
    await waitFor(
      () => got.length,
      (n) => n === 1,
      2_000,
      'got: 1',
    );
    first.close(1000);
    const second = await server.nextConnection();
    expect(await second.request()).toEqual({ beginExclusive: 8, updateFormat: UPDATE_FORMAT });
  });

  it('ends a bounded stream at endInclusive, resuming it if dropped before', async () => {
    const s = streamUpdates(testContext(server.url), {
      beginExclusive: 5,
      endInclusive: 9,
      updateFormat: UPDATE_FORMAT,
    });
    const { got, ended } = drain(s);
    const first = await server.nextConnection();
    const request = await first.request();
    assertRequest(request);
    expect(request).toEqual({ beginExclusive: 5, endInclusive: 9, updateFormat: UPDATE_FORMAT });
    await sendValid(first, 'JsGetUpdatesResponse', transactionFrame(6));
    await waitFor(
      () => got.length,
      (n) => n === 1,
      2_000,
      'got: 1',
    );
    first.drop();
    const second = await server.nextConnection();
    expect(await second.request()).toEqual({
      beginExclusive: 6,
      endInclusive: 9,
      updateFormat: UPDATE_FORMAT,
    });
    await sendValid(second, 'JsGetUpdatesResponse', transactionFrame(8));
    second.close(1000);
    expect(await ended).toEqual({});
    expect(got.map((e) => e.offset)).toEqual([6, 8]);
    expect(server.connections).toHaveLength(2);
  });

  it('ends a bounded stream when the element at endInclusive arrives', async () => {
    const s = streamUpdates(testContext(server.url), {
      beginExclusive: 5,
      endInclusive: 7,
      updateFormat: UPDATE_FORMAT,
    });
    const { got, ended } = drain(s);
    const conn = await server.nextConnection();
    await sendValid(conn, 'JsGetUpdatesResponse', transactionFrame(6));
    await sendValid(conn, 'JsGetUpdatesResponse', transactionFrame(7));
    expect(await ended).toEqual({});
    expect(got.map((e) => e.offset)).toEqual([6, 7]);
    expect((await conn.closed).code).toBe(1000);
  });

  it('stops and closes the socket when aborted', async () => {
    const controller = new AbortController();
    const s = streamUpdates(
      testContext(server.url),
      { beginExclusive: 5, updateFormat: UPDATE_FORMAT },
      { signal: controller.signal },
    );
    const { got, ended } = drain(s);
    const conn = await server.nextConnection();
    await sendValid(conn, 'JsGetUpdatesResponse', transactionFrame(6));
    await waitFor(
      () => got.length,
      (n) => n === 1,
      2_000,
      'got: 1',
    );
    controller.abort();
    expect((await ended).error).toBeInstanceOf(AbortError);
    expect((await conn.closed).code).toBe(1000);
    expect(server.connections).toHaveLength(1);
  });

  it('throws a refused connection that retrying cannot fix', async () => {
    server.rejectNext({ status: 404, body: 'Not Found', raw: true });
    const { ended } = drain(
      streamUpdates(testContext(server.url), { beginExclusive: 5, updateFormat: UPDATE_FORMAT }),
    );
    const { error } = await ended;
    expect(error).toBeInstanceOf(LedgerTransportError);
    expect(server.handshakes).toHaveLength(1);
  });
});

describe('decodeUpdate', () => {
  it('skips unknown update kinds and frames without an update', () => {
    const logger = recordingLogger();
    expect(
      decodeUpdate({ update: { FutureThing: { value: { offset: 3 } } } }, logger),
    ).toBeUndefined();
    expect(logger.lines[0]?.fields).toMatchObject({ updateKind: 'FutureThing' });
    expect(decodeUpdate({}, silentLogger)).toBeUndefined();
  });

  it('rejects a known kind without an offset or a malformed wrapper', () => {
    expect(() => decodeUpdate({ update: { Transaction: { value: {} } } }, silentLogger)).toThrow(
      LedgerTransportError,
    );
    expect(() =>
      decodeUpdate({ update: { Transaction: { value: {} }, Reassignment: {} } }, silentLogger),
    ).toThrow(/2 cases/);
    expect(() => decodeUpdate('nope', silentLogger)).toThrow(LedgerTransportError);
  });
});
