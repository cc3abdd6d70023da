// Canton closes a websocket that carried no frame either way for 60 s (pekko-http idle timeout),
// and a quiet ledger sends nothing. These run against a server that does the same, scaled down
// to a few hundred ms of real time.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/core/clock.js';
import { SeededRandom } from '../../../src/core/seeded-random.js';
import { eventFormat } from '../../../src/ledger/filters.js';
import { LedgerClient } from '../../../src/ledger/ledger-client.js';
import { LedgerUsageError } from '../../../src/ledger/ledger-usage-error.js';
import { streamContext, type StreamContext } from '../../../src/ledger/ws/stream-context.js';
import { streamUpdates } from '../../../src/ledger/ws/update-stream.js';
import { WsRequestStream } from '../../../src/ledger/ws/ws-request-stream.js';
import { activeContract, ALICE } from '../canton-samples.js';
import { IdleClosingWsServer } from './idle-closing-ws-server.js';
import { UPDATE_FORMAT } from './ws-fixtures.js';
import { waitFor } from '../../support/wait-for.js';
import { drain, recordingLogger } from './ws-test-helpers.js';

// Pings every 50 ms leave a busy test machine 350 ms of slack before the server drops a socket.
const IDLE_MS = 400;
const FAST = { initialMs: 10, maxMs: 20 };

let server: IdleClosingWsServer;
let stop: AbortController;
beforeEach(async () => {
  server = await IdleClosingWsServer.start(IDLE_MS);
  stop = new AbortController();
});
afterEach(async () => {
  stop.abort();
  await server.close();
});

function context(pingIntervalMs: number, logger = recordingLogger()): StreamContext {
  return {
    url: server.url,
    clock: systemClock,
    random: new SeededRandom(3),
    logger,
    pingIntervalMs,
  };
}

const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('websocket keep-alive pings', () => {
  it('keep a quiet update stream up: no reconnect, no warning, no flapping connection', async () => {
    const logger = recordingLogger();
    let opens = 0;
    let closes = 0;
    const s = streamUpdates(
      context(50, logger),
      { beginExclusive: 0, updateFormat: UPDATE_FORMAT },
      {
        signal: stop.signal,
        backoff: FAST,
        onOpen: () => (opens += 1),
        onClose: () => (closes += 1),
      },
    );
    drain(s);
    await wait(4 * IDLE_MS);
    expect(server.connections).toHaveLength(1);
    expect(server.connections[0]!.closedIdle).toBe(false);
    expect(server.connections[0]!.pings).toBeGreaterThanOrEqual(5);
    expect(s.reconnects).toBe(0);
    expect({ opens, closes }).toEqual({ opens: 1, closes: 0 });
    expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
  });

  it('without pings (pingIntervalMs 0) the same server drops the stream and it reconnects', async () => {
    const s = streamUpdates(
      context(0),
      { beginExclusive: 0, updateFormat: UPDATE_FORMAT },
      { signal: stop.signal, backoff: FAST },
    );
    drain(s);
    await waitFor(
      () => s.reconnects,
      (n) => n >= 2,
      4 * IDLE_MS + 1_000,
      'two reconnects',
    );
    expect(server.connections.every((c) => c.pings === 0)).toBe(true);
    expect(server.connections[0]!.closedIdle).toBe(true);
  });

  it("default to 25 s, under Canton's 60 s idle timeout", async () => {
    expect((await streamContext({ url: server.url })).pingIntervalMs).toBe(25_000);
    expect((await streamContext({ url: server.url, pingIntervalMs: 0 })).pingIntervalMs).toBe(0);
  });

  it('stop when the socket closes', async () => {
    const frames = new WsRequestStream(context(20), '/v2/updates', { beginExclusive: 0 });
    const { ended } = drain(frames);
    await waitFor(
      () => ({ connections: server.connections.length, pings: frames.pings }),
      (v) => v.connections === 1 && v.pings >= 2,
      2_000,
      'one connection and two pings',
    );
    server.connections[0]!.socket.close(1000);
    await ended;
    const pings = frames.pings;
    await wait(100);
    expect(frames.pings).toBe(pings);
  });

  it('cover completions and active contracts, set per client', async () => {
    await expect(LedgerClient.create({ url: server.url, pingIntervalMs: -1 })).rejects.toThrow(
      LedgerUsageError,
    );
    const client = await LedgerClient.create({ url: server.url, pingIntervalMs: 50 });
    try {
      const completions = client.completions(
        { userId: 'ledgerbot', parties: [ALICE], beginExclusive: 0 },
        { signal: stop.signal, backoff: FAST },
      );
      drain(completions);
      // A snapshot the participant takes long to start sending.
      const acs = drain(
        client.activeContracts(
          { activeAtOffset: 20, eventFormat: eventFormat({ parties: [ALICE] }) },
          { signal: stop.signal },
        ),
      );
      await waitFor(
        () => server.connections.length,
        (n) => n === 2,
        2_000,
        'server.connections: 2',
      );
      await wait(3 * IDLE_MS);
      const acsConn = server.connections.find((c) => c.path === '/v2/state/active-contracts')!;
      acsConn.socket.send(JSON.stringify(activeContract(3)));
      acsConn.socket.close(1000);
      expect(await acs.ended).toEqual({});
      expect(acs.got).toHaveLength(1);
      expect(completions.reconnects).toBe(0);
      expect(server.connections).toHaveLength(2);
      expect(server.connections.every((c) => !c.closedIdle && c.pings >= 3)).toBe(true);
    } finally {
      await client.close();
    }
  });
});
