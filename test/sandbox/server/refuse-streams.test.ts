import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { classify } from '../../../src/ledger/classify.js';
import { LedgerApiError } from '../../../src/ledger/ledger-api-error.js';
import { WsRequestStream } from '../../../src/ledger/ws/ws-request-stream.js';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { testContext } from '../../ledger/ws/ws-test-helpers.js';
import { call, keylessCommands, startTestSandbox, wildcard, wsCollect } from './sandbox-fixture.js';

// refuseStreams keeps a client's update and completion streams down until it is cleared: what
// a test of "not ready while the stream is down" needs, whatever the client's reconnect speed.

let sb: Sandbox | undefined;

afterEach(async () => {
  await sb?.stop();
  sb = undefined;
});

function updatesRequest(s: Sandbox): unknown {
  return {
    beginExclusive: 0,
    updateFormat: {
      includeTransactions: {
        eventFormat: wildcard(s.parties.Alice!),
        transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA',
      },
    },
  };
}

/** An open websocket on `path`; `sendRequest` false leaves it open without a request. */
async function openSocket(
  s: Sandbox,
  path: string,
  request: unknown,
  sendRequest: boolean,
): Promise<{ ws: WebSocket; frames: unknown[]; closed: Promise<number> }> {
  const ws = new WebSocket(s.url.replace('http', 'ws') + path, ['daml.ws.auth']);
  const frames: unknown[] = [];
  ws.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString('utf8'))));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  if (sendRequest) {
    ws.send(JSON.stringify(request));
    // The first transaction arrives: the stream is served.
    while (frames.length === 0) await new Promise((r) => setTimeout(r, 10));
  }
  return { ws, frames, closed };
}

/** What the bot's stream client makes of a connection attempt. */
async function connectError(s: Sandbox, path: string, request: unknown): Promise<unknown> {
  const stream = new WsRequestStream(testContext(s.url), path, request);
  try {
    const first = await stream.next();
    await stream.return();
    return first;
  } catch (err) {
    return err;
  }
}

describe('refuseStreams', () => {
  it('drops the open streams, refuses new ones with a retryable 503 until cleared, and counts both', async () => {
    sb = await startTestSandbox();
    await call(sb, 'POST', '/v2/commands/submit-and-wait', keylessCommands(sb));
    const completionsRequest = {
      userId: 'alice-bot',
      parties: [sb.parties.Alice],
      beginExclusive: 0,
    };
    const updates = await openSocket(sb, '/v2/updates', updatesRequest(sb), true);
    const completions = await openSocket(sb, '/v2/commands/completions', completionsRequest, true);
    // Open, its request not sent yet: dropped too.
    const idle = await openSocket(sb, '/v2/updates', updatesRequest(sb), false);

    const set = await call(sb, 'POST', '/sandbox/faults', { refuseStreams: true });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ refuseStreams: true });
    expect(await updates.closed).toBe(1006);
    expect(await completions.closed).toBe(1006);
    expect(await idle.closed).toBe(1006);

    for (const [path, request] of [
      ['/v2/updates', updatesRequest(sb)],
      ['/v2/commands/completions', completionsRequest],
      ['/v2/commands/command-completions', completionsRequest],
    ] as const) {
      const err = await connectError(sb, path, request);
      expect(err, path).toBeInstanceOf(LedgerApiError);
      const apiError = err as LedgerApiError;
      expect(apiError.status).toBe(503);
      expect(apiError.code).toBe('SERVICE_NOT_RUNNING');
      expect(apiError.error.grpcCodeValue).toBe(14);
      // A client reconnects after it (with backoff) rather than giving up.
      expect(classify(apiError)).toBe('retryable');
    }
    // The rest of the API is served meanwhile: the ledger moves on, the ACS can be read.
    expect(
      (await call(sb, 'POST', '/v2/commands/submit-and-wait', keylessCommands(sb))).status,
    ).toBe(200);
    const end = ((await call(sb, 'GET', '/v2/state/ledger-end')).body as { offset: number }).offset;
    const acs = await wsCollect(sb, '/v2/state/active-contracts', {
      activeAtOffset: end,
      eventFormat: wildcard(sb.parties.Alice!),
    });
    expect(acs.frames.length).toBeGreaterThan(0);

    expect((await call(sb, 'DELETE', '/sandbox/faults')).status).toBe(200);
    const again = await openSocket(sb, '/v2/updates', updatesRequest(sb), true);
    expect(again.frames.length).toBeGreaterThan(0);
    again.ws.close();
    await again.closed;

    const stats = (await call(sb, 'GET', '/sandbox/fault-stats')).body as Record<string, number>;
    expect(stats.droppedStreams).toBe(3);
    expect(stats.refusedStreams).toBe(3);
  });

  it('is turned off by false as well as by a clear, and takes only a boolean', async () => {
    sb = await startTestSandbox();
    await call(sb, 'POST', '/sandbox/faults', { refuseStreams: true, dropCompletionRate: 0.5 });
    const off = await call(sb, 'POST', '/sandbox/faults', { refuseStreams: false });
    expect(off.body).toEqual({ refuseStreams: false, dropCompletionRate: 0.5 });
    const open = await openSocket(sb, '/v2/updates', updatesRequest(sb), false);
    open.ws.close();
    await open.closed;
    const bad = await call(sb, 'POST', '/sandbox/faults', { refuseStreams: 'yes' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('refuseStreams must be true or false');
  });
});
