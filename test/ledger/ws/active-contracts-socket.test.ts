import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LedgerApiError } from '../../../src/ledger/ledger-api-error.js';
import { LedgerTransportError } from '../../../src/ledger/ledger-transport-error.js';
import type { GetActiveContractsRequest } from '../../../src/ledger/wire/wire-types.js';
import { activeContractsSocket } from '../../../src/ledger/ws/active-contracts-socket.js';
import { FakeWsServer } from '../../support/fake-ws-server.js';
import { specValidator } from '../../support/spec-validator.js';
import { ALICE, PRUNED_ERROR, SHUTDOWN_ERROR, acsFrame } from './ws-fixtures.js';
import { waitFor } from '../../support/wait-for.js';
import { AutoClock, collect, drain, sendValid, testContext } from './ws-test-helpers.js';

const REQUEST: GetActiveContractsRequest = {
  activeAtOffset: 42,
  eventFormat: {
    filtersByParty: {
      [ALICE]: {
        cumulative: [
          { identifierFilter: { WildcardFilter: { value: { includeCreatedEventBlob: false } } } },
        ],
      },
    },
    verbose: false,
  },
};

let server: FakeWsServer;
let stop: AbortController;
beforeEach(async () => {
  server = await FakeWsServer.start();
  stop = new AbortController();
});
afterEach(async () => {
  stop.abort();
  await server.close();
});

function contractIds(frames: unknown[]): string[] {
  return frames.map(
    (f) =>
      (f as { contractEntry: { JsActiveContract: { createdEvent: { contractId: string } } } })
        .contractEntry.JsActiveContract.createdEvent.contractId,
  );
}

describe('activeContractsSocket', () => {
  it('streams the snapshot until the server closes', async () => {
    specValidator('asyncapi-3.5').assert('GetActiveContractsRequest', REQUEST);
    specValidator('asyncapi-3.4').assert('GetActiveContractsRequest', REQUEST);
    const result = collect(
      activeContractsSocket(testContext(server.url), REQUEST, { signal: stop.signal }),
    );
    const conn = await server.nextConnection();
    expect(conn.handshake.path).toBe('/v2/state/active-contracts');
    expect(await conn.request()).toEqual(REQUEST);
    await sendValid(conn, 'JsGetActiveContractsResponse', acsFrame(1));
    await sendValid(conn, 'JsGetActiveContractsResponse', acsFrame(2));
    conn.close(1000);
    const frames = await result;
    expect(frames).toEqual([acsFrame(1), acsFrame(2)]);
  });

  it('resumes a dropped stream from the last element’s continuation token (3.5)', async () => {
    const clock = new AutoClock();
    const reconnects: number[] = [];
    const { got, ended } = drain(
      activeContractsSocket(testContext(server.url, { clock }), REQUEST, {
        signal: stop.signal,
        onReconnect: (_attempt, delayMs) => reconnects.push(delayMs),
      }),
    );
    const first = await server.nextConnection();
    await sendValid(first, 'JsGetActiveContractsResponse', acsFrame(1, 'tok-1'));
    await sendValid(first, 'JsGetActiveContractsResponse', acsFrame(2, 'tok-2'));
    await waitFor(
      () => got.length,
      (n) => n === 2,
      2_000,
      'got: 2',
    );
    first.drop();
    const second = await server.nextConnection();
    const resumed = await second.request();
    specValidator('asyncapi-3.5').assert('GetActiveContractsRequest', resumed);
    expect(resumed).toEqual({ ...REQUEST, streamContinuationToken: 'tok-2' });
    await sendValid(second, 'JsGetActiveContractsResponse', acsFrame(3, 'tok-3'));
    second.close(1000);
    expect(await ended).toEqual({});
    expect(contractIds(got)).toEqual(contractIds([acsFrame(1), acsFrame(2), acsFrame(3)]));
    expect(clock.sleeps).toEqual(reconnects);
    expect(reconnects).toHaveLength(1);
  });

  it('retries from scratch when the drop comes before the first element', async () => {
    const { got, ended } = drain(
      activeContractsSocket(testContext(server.url), REQUEST, { signal: stop.signal }),
    );
    const first = await server.nextConnection();
    await sendValid(first, 'JsCantonError', SHUTDOWN_ERROR);
    const second = await server.nextConnection();
    expect(await second.request()).toEqual(REQUEST);
    await sendValid(second, 'JsGetActiveContractsResponse', acsFrame(1));
    second.close(1000);
    expect(await ended).toEqual({});
    expect(got).toHaveLength(1);
  });

  it('fails on a drop after elements without a continuation token (3.4)', async () => {
    const { got, ended } = drain(
      activeContractsSocket(testContext(server.url), REQUEST, { signal: stop.signal }),
    );
    const conn = await server.nextConnection();
    await sendValid(conn, 'JsGetActiveContractsResponse', acsFrame(1));
    await waitFor(
      () => got.length,
      (n) => n === 1,
      2_000,
      'got: 1',
    );
    conn.drop();
    const { error } = await ended;
    expect(error).toBeInstanceOf(LedgerTransportError);
    expect((error as LedgerTransportError).failure).toBe('closed');
    expect(server.connections).toHaveLength(1);
  });

  it('throws a final error frame', async () => {
    const failure = collect(
      activeContractsSocket(testContext(server.url), REQUEST, { signal: stop.signal }),
    );
    const conn = await server.nextConnection();
    await sendValid(conn, 'JsCantonError', PRUNED_ERROR);
    await expect(failure).rejects.toBeInstanceOf(LedgerApiError);
  });
});
