import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { ELEMENTS_PER_TURN } from '../../../src/sandbox/server/paced-send.js';
import { openActiveContracts, openUpdates } from '../../../src/sandbox/server/stream-openers.js';
import { createInvoice as create, invoiceLedger } from '../engine/invoice-ledger.js';
import {
  ANY,
  BACKLOG,
  contextOf,
  invoicesBacklog,
  issuerCompletions,
  offsetsSink,
  range,
  rejection,
  updatesRequest,
} from './backlog-fixture.js';
import { call, keylessCommands, startTestSandbox, wildcard } from './sandbox-fixture.js';

describe('a stream with a backlog sends it turn by turn', () => {
  it('an open-ended update stream: the backlog, then what was committed meanwhile, each once and in order', async () => {
    const { l, ctx } = invoicesBacklog();
    const sink = offsetsSink();
    const opened = openUpdates(ctx, updatesRequest(l), ANY, sink);
    // One turn went out within the call; the rest waits for later turns.
    expect(sink.offsets).toEqual(range(1, ELEMENTS_PER_TURN));
    // Committed between two turns of the backlog: sent after it, by the backlog's own reads.
    create(l, 'meanwhile-1');
    create(l, 'meanwhile-2');
    await opened.sent;
    // Committed after the backlog: sent by the live subscription.
    create(l, 'live');
    expect(opened.openEnded).toBe(true);
    expect(sink.offsets).toEqual(range(1, BACKLOG + 3));
    opened.cancel();
    create(l, 'after-cancel');
    expect(sink.offsets).toHaveLength(BACKLOG + 3);
  });

  it('a bounded update stream ends at its end offset, whatever is committed meanwhile', async () => {
    const { l, ctx } = invoicesBacklog();
    const sink = offsetsSink();
    const opened = openUpdates(ctx, updatesRequest(l, { endInclusive: BACKLOG - 1 }), ANY, sink);
    create(l, 'meanwhile');
    await opened.sent;
    expect(opened.openEnded).toBe(false);
    expect(sink.offsets).toEqual(range(1, BACKLOG - 1));
  });

  it('a turn never splits a transaction from its completion (they share an offset)', async () => {
    const l = invoiceLedger();
    // One rejection first (an offset of its own), so that the first turn ends between the
    // transaction and the completion of one offset.
    l.engine.recordCompletion(rejection(l, 0));
    for (let i = 0; i < BACKLOG; i++) {
      const tx = create(l, `INV-${i}`);
      l.engine.recordCompletion({
        ...rejection(l, i + 1),
        status: { code: 0, message: '', details: [] },
        updateId: tx.updateId,
        transaction: tx,
      });
    }
    const ctx = contextOf(l);
    const completions = offsetsSink();
    const c = issuerCompletions(ctx, l, completions);
    await c.sent;
    c.cancel();
    expect(completions.offsets).toEqual(range(1, BACKLOG + 1));
    const updates = offsetsSink();
    const u = openUpdates(ctx, updatesRequest(l), ANY, updates);
    await u.sent;
    u.cancel();
    expect(updates.offsets).toEqual(range(2, BACKLOG + 1));
  });

  it('a completion stream and an active-contracts snapshot are paced the same way', async () => {
    const l = invoiceLedger();
    const reject = (i: number) => l.engine.recordCompletion(rejection(l, i));
    for (let i = 0; i < BACKLOG; i++) reject(i);
    const ctx = contextOf(l);
    const completions = offsetsSink();
    const c = issuerCompletions(ctx, l, completions);
    expect(completions.offsets).toHaveLength(ELEMENTS_PER_TURN);
    await c.sent;
    reject(BACKLOG);
    expect(completions.offsets).toEqual(range(1, BACKLOG + 1));
    c.cancel();

    for (let i = 0; i < BACKLOG; i++) create(l, `INV-${i}`);

    const snapshot = offsetsSink();
    const a = openActiveContracts(
      ctx,
      { activeAtOffset: 2 * BACKLOG + 1, eventFormat: wildcard(l.issuer) },
      ANY,
      snapshot,
    );
    expect(snapshot.offsets).toHaveLength(ELEMENTS_PER_TURN);
    await a.sent;
    expect(snapshot.offsets).toEqual(range(BACKLOG + 2, 2 * BACKLOG + 1));
  });

  it('a descending update stream sends the latest transactions first, turn by turn', async () => {
    const l = invoiceLedger();
    // Completions without a transaction between them: offsets the backwards walk passes over.
    for (let i = 0; i < BACKLOG; i++) {
      create(l, `INV-${i}`);
      if (i % 100 === 0) l.engine.recordCompletion(rejection(l, i));
    }
    const end = l.engine.ledgerEnd();
    const expected = range(1, end)
      .filter((o) => l.engine.transactionByOffset(o) !== undefined)
      .filter((o) => o > 3)
      .reverse();
    const sink = offsetsSink();
    const opened = openUpdates(
      contextOf(l),
      updatesRequest(l, { beginExclusive: 3, endInclusive: end, descendingOrder: true }),
      ANY,
      sink,
    );
    expect(sink.offsets).toEqual(expected.slice(0, ELEMENTS_PER_TURN));
    create(l, 'meanwhile');
    await opened.sent;
    expect(opened.openEnded).toBe(false);
    expect(sink.offsets).toEqual(expected);
  });
});

describe('websocket backpressure', () => {
  let sb: Sandbox;

  beforeAll(async () => {
    // A send buffer smaller than one turn of frames: every turn waits for the socket to drain.
    sb = await startTestSandbox({ limits: { streamBufferBytes: 4096 } });
    for (let i = 0; i < BACKLOG; i += 32) {
      await Promise.all(
        range(i, Math.min(BACKLOG, i + 32) - 1).map(async () => {
          const r = await call(sb, 'POST', '/v2/commands/submit-and-wait', keylessCommands(sb));
          expect(r.status, r.text).toBe(200);
        }),
      );
    }
  });

  afterAll(async () => {
    await sb.stop();
  });

  function openStream(request: unknown, want: number) {
    return new Promise<{ offsets: number[]; closeCode: number | undefined }>((resolve, reject) => {
      const ws = new WebSocket(`${sb.url.replace('http', 'ws')}/v2/updates`, ['daml.ws.auth']);
      const offsets: number[] = [];
      const timer = setTimeout(() => {
        ws.terminate();
        reject(new Error(`stalled after ${offsets.length} frames`));
      }, 10_000);
      ws.on('open', () => ws.send(JSON.stringify(request)));
      ws.on('message', (data: Buffer) => {
        const f = JSON.parse(data.toString('utf8')) as {
          update: { Transaction?: { value: { offset: number } } };
        };
        const offset = f.update.Transaction?.value.offset;
        if (offset !== undefined) offsets.push(offset);
        if (offsets.length === want) {
          clearTimeout(timer);
          resolve({ offsets, closeCode: undefined });
          ws.close();
        }
      });
      ws.on('close', (code) => {
        clearTimeout(timer);
        resolve({ offsets, closeCode: code });
      });
      ws.on('error', reject);
    });
  }

  const request = (extra: Record<string, unknown> = {}) => ({
    beginExclusive: 0,
    updateFormat: {
      includeTransactions: {
        eventFormat: wildcard(sb.parties.Alice!),
        transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA',
      },
    },
    ...extra,
  });

  it('sends the whole backlog, waiting for the socket between turns, then follows the ledger', async () => {
    const stream = openStream(request(), BACKLOG + 1);
    // The live one: committed once the stream has been asked for (before, during or after the
    // backlog, it comes once and last).
    await new Promise((r) => setTimeout(r, 20));
    const live = await call(sb, 'POST', '/v2/commands/submit-and-wait', keylessCommands(sb));
    expect(live.status, live.text).toBe(200);
    const { offsets } = await stream;
    expect(offsets).toEqual(range(1, BACKLOG + 1));
  });

  it('a bounded stream closes normally after its last frame', async () => {
    const { offsets, closeCode } = await openStream(request({ endInclusive: BACKLOG }), -1);
    expect(offsets).toEqual(range(1, BACKLOG));
    expect(closeCode).toBe(1000);
  });
});
