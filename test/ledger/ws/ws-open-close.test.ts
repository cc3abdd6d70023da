import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LedgerApiError } from '../../../src/ledger/ledger-api-error.js';
import { LedgerTransportError } from '../../../src/ledger/ledger-transport-error.js';
import { WsRequestStream } from '../../../src/ledger/ws/ws-request-stream.js';
import { FakeWsServer } from '../../support/fake-ws-server.js';
import { PRUNED_ERROR, UPDATE_FORMAT, transactionFrame } from './ws-fixtures.js';
import { waitFor } from '../../support/wait-for.js';
import { caught, sendValid, testContext } from './ws-test-helpers.js';

// The open/close signal is what the bot's "updates stream connected" gauge and /readyz read:
// it must say "down" the moment the stream is over, not after the closing handshake.

const REQUEST = { beginExclusive: 5, updateFormat: UPDATE_FORMAT };

let server: FakeWsServer;
beforeEach(async () => {
  server = await FakeWsServer.start();
});
afterEach(async () => {
  await server.close();
});

function stream(events: string[]): WsRequestStream {
  return new WsRequestStream(testContext(server.url), '/v2/updates', REQUEST, {
    onOpen: () => events.push('open'),
    onClose: () => events.push('close'),
  });
}

describe('WsRequestStream open and close reports', () => {
  it('reports the close of a stream ended by an error frame before the consumer sees the error, once', async () => {
    const events: string[] = [];
    const s = stream(events);
    const first = s.next();
    const conn = await server.nextConnection();
    await conn.request();
    await sendValid(conn, 'JsGetUpdatesResponse', transactionFrame(6));
    expect((await first).value).toEqual(transactionFrame(6));
    // Connected while frames flow.
    expect(events).toEqual(['open']);
    const failure = caught(() => s.next());
    await sendValid(conn, 'JsCantonError', PRUNED_ERROR);
    const err = await failure;
    expect(err).toBeInstanceOf(LedgerApiError);
    // The closing handshake needs a round trip to the server; the report did not wait for it.
    expect(events).toEqual(['open', 'close']);
    expect((await conn.closed).code).toBe(1000);
    await waitFor(
      () => conn.isOpen,
      (open) => !open,
      2_000,
      'the connection closed',
    );
    expect(events).toEqual(['open', 'close']);
  });

  it('reports the close of a dropped socket once', async () => {
    const events: string[] = [];
    const failure = caught(async () => {
      for await (const frame of stream(events)) void frame;
    });
    const conn = await server.nextConnection();
    await conn.request();
    expect(events).toEqual(['open']);
    conn.drop();
    const err = await failure;
    expect(err).toBeInstanceOf(LedgerTransportError);
    expect((err as LedgerTransportError).failure).toBe('closed');
    expect(events).toEqual(['open', 'close']);
  });

  it('reports the close when the consumer stops, once', async () => {
    const events: string[] = [];
    const s = stream(events);
    const first = s.next();
    const conn = await server.nextConnection();
    await conn.request();
    await sendValid(conn, 'JsGetUpdatesResponse', transactionFrame(6));
    expect((await first).value).toEqual(transactionFrame(6));
    await s.return();
    expect(events).toEqual(['open', 'close']);
    expect((await conn.closed).code).toBe(1000);
    expect(events).toEqual(['open', 'close']);
  });
});
