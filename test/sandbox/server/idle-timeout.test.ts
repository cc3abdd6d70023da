import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { call, keylessCommands, startTestSandbox, wildcard } from './sandbox-fixture.js';

// Canton leaves pekko-http's server idle-timeout at 60 s: a websocket with no frame in either
// direction for that long is closed, and a client's pings keep it open (NOTES.md
// "Corrections"). Offset checkpoints only come when the ledger end moves, so a quiet ledger
// sends nothing. The tests shorten the timeout to 300 ms.

const IDLE_MS = 300;
let sb: Sandbox | undefined;

afterEach(async () => {
  await sb?.stop();
  sb = undefined;
});

type Socket = { ws: WebSocket; frames: unknown[]; closed: Promise<number>; openedAt: number };

async function open(s: Sandbox, request: unknown): Promise<Socket> {
  const ws = new WebSocket(s.url.replace('http', 'ws') + '/v2/updates', ['daml.ws.auth']);
  const frames: unknown[] = [];
  ws.on('message', (d: Buffer) => frames.push(JSON.parse(d.toString('utf8'))));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  if (request !== undefined) ws.send(JSON.stringify(request));
  return { ws, frames, closed, openedAt: Date.now() };
}

async function tailFromEnd(s: Sandbox): Promise<unknown> {
  const end = ((await call(s, 'GET', '/v2/state/ledger-end')).body as { offset: number }).offset;
  return {
    beginExclusive: end,
    updateFormat: {
      includeTransactions: {
        eventFormat: wildcard(s.parties.Alice!),
        transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA',
      },
    },
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('idle timeout', () => {
  it('closes a quiet stream abruptly (1006) after the idle timeout; no checkpoint on a quiet ledger', async () => {
    sb = await startTestSandbox({ idleTimeout: IDLE_MS });
    await call(sb, 'POST', '/v2/commands/submit-and-wait', keylessCommands(sb));
    const s = await open(sb, await tailFromEnd(sb));
    const code = await s.closed;
    const after = Date.now() - s.openedAt;
    expect(code).toBe(1006);
    expect(after).toBeGreaterThanOrEqual(IDLE_MS - 50);
    expect(after).toBeLessThan(IDLE_MS + 1_500);
    // The checkpoint interval is 100 ms, but the ledger end never moved: nothing was sent.
    expect(s.frames).toEqual([]);
  });

  it('closes a socket whose request never came', async () => {
    sb = await startTestSandbox({ idleTimeout: IDLE_MS });
    const s = await open(sb, undefined);
    expect(await s.closed).toBe(1006);
  });

  it('a client that pings keeps the stream open; when it stops, the stream is closed', async () => {
    sb = await startTestSandbox({ idleTimeout: IDLE_MS });
    const s = await open(sb, await tailFromEnd(sb));
    let state = 'open';
    void s.closed.then(() => (state = 'closed'));
    const pinger = setInterval(() => s.ws.ping(), IDLE_MS / 3);
    await sleep(IDLE_MS * 4);
    clearInterval(pinger);
    expect(state).toBe('open');
    // Frames from the server count too: a transaction resets the quiet time.
    await call(sb, 'POST', '/v2/commands/submit-and-wait', keylessCommands(sb));
    await sleep(IDLE_MS / 2);
    expect(state).toBe('open');
    expect(s.frames.length).toBeGreaterThan(0);
    expect(await s.closed).toBe(1006);
  });

  it('any client message counts as traffic too', async () => {
    sb = await startTestSandbox({ idleTimeout: IDLE_MS });
    const s = await open(sb, await tailFromEnd(sb));
    let state = 'open';
    void s.closed.then(() => (state = 'closed'));
    // Later messages are ignored by the server (it reads one request), but they are traffic.
    const talker = setInterval(() => s.ws.send('{}'), IDLE_MS / 3);
    await sleep(IDLE_MS * 3);
    clearInterval(talker);
    expect(state).toBe('open');
    expect(await s.closed).toBe(1006);
  });

  it('0 turns it off', async () => {
    sb = await startTestSandbox({ idleTimeout: 0 });
    const s = await open(sb, await tailFromEnd(sb));
    let state = 'open';
    void s.closed.then(() => (state = 'closed'));
    await sleep(IDLE_MS * 3);
    expect(state).toBe('open');
    s.ws.close();
  });

  it('refuses a negative or malformed idle timeout', async () => {
    await expect(startTestSandbox({ idleTimeout: -1 })).rejects.toThrow(/idleTimeout/);
    await expect(startTestSandbox({ idleTimeout: 'soon' })).rejects.toThrow(/idleTimeout/);
  });
});
