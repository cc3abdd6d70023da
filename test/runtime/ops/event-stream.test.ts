import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/fake-clock.js';
import { ReloadHistory } from '../../../src/runtime/ops/reload-history.js';
import type { IntentView } from '../../../src/runtime/intent-view.js';
import { startOpsServer, type OpsServer } from '../../../src/runtime/ops/ops-server.js';
import type { EventStreamLimits } from '../../../src/runtime/ops/event-stream.js';
import { waitFor } from '../../support/wait-for.js';
import { botFixture, invoiceCreated, recordingLogger, type BotFixture } from '../bot-fixture.js';

/*
 * GET /events on the fake clock: a real bot (on the fake ledger) and a real socket, with time
 * moved by hand, so when each message is sent is decided by the clock alone.
 */

let f: BotFixture | undefined;
let ops: OpsServer | undefined;
const streams: AbortController[] = [];

afterEach(async () => {
  for (const s of streams.splice(0)) s.abort();
  await ops?.close();
  ops = undefined;
  await f?.cleanup();
  f = undefined;
});

async function start(
  limits: Partial<EventStreamLimits> = {},
  more: { reloads?: ReloadHistory; logger?: ReturnType<typeof recordingLogger> } = {},
): Promise<BotFixture> {
  f = botFixture();
  f.ledger.end = 10;
  await f.bot.start();
  const fixture = f;
  ops = await startOpsServer({
    bot: fixture.bot,
    store: fixture.store,
    ledger: { ledgerEnd: () => Promise.resolve(fixture.ledger.end) },
    port: 0,
    clock: fixture.clock,
    processMetrics: false,
    eventStreamLimits: limits,
    ...more,
  });
  return fixture;
}

type Message = { event: string; data: unknown } | { comment: string };

async function open(): Promise<{ status: number; messages: Message[] }> {
  const abort = new AbortController();
  streams.push(abort);
  const res = await fetch(`${ops!.url}/events`, { signal: abort.signal });
  const messages: Message[] = [];
  if (res.status === 200 && res.body !== null) {
    const body = res.body;
    void (async () => {
      let buffer = '';
      const decoder = new TextDecoder();
      try {
        for await (const chunk of body) {
          buffer += decoder.decode(chunk as Uint8Array, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (block.startsWith(':')) messages.push({ comment: block });
            const name = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (name !== undefined && data !== undefined) {
              messages.push({ event: name, data: JSON.parse(data) as unknown });
            }
          }
        }
      } catch {
        // aborted
      }
    })();
  }
  return { status: res.status, messages };
}

const named = (messages: Message[], name: string): unknown[] =>
  messages.flatMap((m) => ('event' in m && m.event === name ? [m.data] : []));

async function until(messages: Message[], what: string, test: (m: Message[]) => boolean) {
  await waitFor(
    () => Promise.resolve(messages),
    (m) => test(m),
    5_000,
    what,
  );
}

describe('GET /events on the fake clock', () => {
  it('gathers the intent changes of 250 ms into one message, the newest state per intent', async () => {
    const fx = await start();
    const s = await open();
    expect(s.status).toBe(200);
    await until(s.messages, 'the first status', (m) => named(m, 'status').length === 1);
    for (const offset of [11, 12, 13]) fx.ledger.updateQueue.push(invoiceCreated(offset));
    await fx.settle();
    expect(fx.ledger.submits).toHaveLength(3);
    await fx.clock.advance(250);
    await until(s.messages, 'an intents message', (m) => named(m, 'intents').length > 0);
    const first = named(s.messages, 'intents')[0] as { intents: IntentView[]; truncated?: true };
    // Recorded (pending) and submitted within the window: one entry each, in its latest state.
    expect(first.intents.map((i) => i.state)).toEqual(['submitted', 'submitted', 'submitted']);
    expect(new Set(first.intents.map((i) => i.commandId)).size).toBe(3);
    expect(first.truncated).toBeUndefined();
  });

  it('sends at most maxIntents per message, saying it left some out', async () => {
    const fx = await start({ maxIntents: 2 });
    const s = await open();
    await until(s.messages, 'the first status', (m) => named(m, 'status').length === 1);
    for (const offset of [11, 12, 13, 14]) fx.ledger.updateQueue.push(invoiceCreated(offset));
    await fx.settle();
    await fx.clock.advance(250);
    await until(s.messages, 'an intents message', (m) => named(m, 'intents').length > 0);
    const first = named(s.messages, 'intents')[0] as { intents: IntentView[]; truncated?: true };
    expect(first.intents).toHaveLength(2);
    expect(first.truncated).toBe(true);
  });

  it('sends the status at least every 15 s with a keep-alive comment, and when it changed', async () => {
    const fx = await start();
    const s = await open();
    await until(s.messages, 'the first status', (m) => named(m, 'status').length === 1);
    // Nothing changes for 15 s: one status (the heartbeat), then the keep-alive, nothing before.
    for (let i = 0; i < 15; i++) await fx.clock.advance(1000);
    await until(s.messages, 'a keep-alive', (m) =>
      m.some((x) => 'comment' in x && x.comment === ': keep-alive'),
    );
    expect(s.messages.map((m) => ('event' in m ? m.event : m.comment))).toEqual([
      'status',
      'status',
      ': keep-alive',
    ]);
    fx.ledger.updateQueue.push(invoiceCreated(11));
    await fx.settle();
    await fx.clock.advance(1000);
    await until(s.messages, 'a changed status', (m) => named(m, 'status').length === 3);
    const changed = named(s.messages, 'status')[2] as { processedOffset: number; inFlight: number };
    expect(changed).toMatchObject({ processedOffset: 11, inFlight: 1 });
  });

  it('refuses a stream beyond maxStreams, and has room again once one closed', async () => {
    await start({ maxStreams: 1 });
    const one = await open();
    await until(one.messages, 'the first status', (m) => named(m, 'status').length === 1);
    const refused = await fetch(`${ops!.url}/events`);
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      'TOO_MANY_STREAMS',
    );
    streams[0]!.abort();
    await waitFor(
      () => open(),
      (s) => s.status === 200,
      5_000,
      'room for another stream',
    );
  });

  it('drops a client that reads too slowly instead of buffering for it', async () => {
    const reloads = new ReloadHistory(new FakeClock());
    const log = recordingLogger();
    await start({ maxStreams: 1 }, { reloads, logger: log });
    const { port } = new URL(ops!.url);
    const socket = connect(Number(port), '127.0.0.1');
    let received = 0;
    let closed = false;
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.on('close', () => (closed = true));
    socket.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await waitFor(
      () => Promise.resolve(received),
      (n) => n > 0,
      5_000,
      'the stream to start',
    );
    // It stops reading: what the server sends piles up in the kernel, then in the process.
    socket.pause();
    const big = { applied: false as const, errors: ['x'.repeat(1024 * 1024)] };
    for (let i = 0; i < 64 && !closed; i++) {
      reloads.record(big);
      await new Promise((resolve) => setImmediate(resolve));
    }
    socket.resume();
    await waitFor(
      () => Promise.resolve(closed),
      (c) => c,
      10_000,
      'the slow stream to be closed',
    );
    expect(log.lines.some((l) => l.msg.includes('reads too slowly'))).toBe(true);
    // Its place is free again.
    await waitFor(
      () => open(),
      (x) => x.status === 200,
      5_000,
      'room for another stream',
    );
  });
});
