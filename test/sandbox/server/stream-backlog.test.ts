import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { collectList } from '../../../src/sandbox/server/list-collector.js';
import {
  ELEMENTS_PER_TURN,
  type OpenedStream,
  type StreamSink,
} from '../../../src/sandbox/server/paced-send.js';
import { SandboxAuth } from '../../../src/sandbox/server/sandbox-auth.js';
import type { SandboxContext } from '../../../src/sandbox/server/sandbox-context.js';
import { StreamHub } from '../../../src/sandbox/server/stream-hub.js';
import {
  openActiveContracts,
  openCompletions,
  openUpdates,
} from '../../../src/sandbox/server/stream-openers.js';
import {
  createInvoice as create,
  invoiceLedger,
  type InvoiceLedger,
} from '../engine/invoice-ledger.js';
import { call, keylessCommands, startTestSandbox, wildcard } from './sandbox-fixture.js';

/** More than two turns of frames. */
const BACKLOG = 2 * ELEMENTS_PER_TURN + 10;

const ANY = { kind: 'any', userId: undefined } as const;

/** The list wait time of the context below (Canton's default). */
const LIST_WAIT_MS = 500;

/** What the stream openers read of a sandbox: its engine, a hub over it, no auth. */
function contextOf(l: InvoiceLedger): SandboxContext {
  const hub = new StreamHub(l.engine, l.clock, 60_000);
  hub.start();
  const auth = new SandboxAuth({
    mode: 'none',
    participantId: 'sandbox',
    users: { rightsOf: () => undefined },
    clock: l.clock,
  });
  // Lists long enough for a backlog of several turns.
  const limits = { listMaxElements: 10_000, listWaitMs: LIST_WAIT_MS };
  return { engine: l.engine, hub, auth, clock: l.clock, limits } as unknown as SandboxContext;
}

/** A ledger of BACKLOG invoices (one transaction per offset, no completions) and its context. */
function invoicesBacklog(): { l: InvoiceLedger; ctx: SandboxContext } {
  const l = invoiceLedger();
  for (let i = 0; i < BACKLOG; i++) create(l, `INV-${i}`);
  return { l, ctx: contextOf(l) };
}

function offsetsSink(): StreamSink & { offsets: number[]; dropped: boolean } {
  const offsets: number[] = [];
  const sink: StreamSink & { offsets: number[]; dropped: boolean } = {
    offsets,
    dropped: false,
    send: (frame) => {
      const f = JSON.parse(frame) as {
        update?: { Transaction?: { value: { offset: number } } };
        completionResponse?: { Completion?: { value: { offset: number } } };
        contractEntry?: { JsActiveContract?: { createdEvent: { offset: number } } };
      };
      const offset =
        f.update?.Transaction?.value.offset ??
        f.completionResponse?.Completion?.value.offset ??
        f.contractEntry?.JsActiveContract?.createdEvent.offset;
      if (offset === undefined) throw new Error(`unexpected frame ${frame.slice(0, 200)}`);
      offsets.push(offset);
    },
    drop: () => {
      sink.dropped = true;
    },
    wantsMore: () => !sink.dropped,
  };
  return sink;
}

/** A rejected command's completion: an offset of its own. */
function rejection(l: InvoiceLedger, i: number) {
  return {
    commandId: `command-${i}`,
    status: { code: 3, message: 'rejected', details: [] },
    updateId: '',
    userId: 'u',
    actAs: [l.issuer],
    submissionId: `s-${i}`,
    deduplicationPeriod: { Empty: {} },
    paidTrafficCost: 0,
  };
}

/** The issuer's completions from the ledger's start, as GetCompletionsRequest asks for them. */
function issuerCompletions(ctx: SandboxContext, l: InvoiceLedger, sink: StreamSink) {
  return openCompletions(
    ctx,
    'v35',
    { userId: 'u', parties: [l.issuer], beginExclusive: 0 },
    ANY,
    sink,
  );
}

const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

function updatesRequest(l: InvoiceLedger, extra: Record<string, unknown> = {}) {
  return {
    beginExclusive: 0,
    updateFormat: {
      includeTransactions: {
        eventFormat: wildcard(l.issuer),
        transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA',
      },
    },
    ...extra,
  };
}

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

describe('the drop fault (closeStreamsEveryMs)', () => {
  it('reaches a stream still sending its backlog, and the subscribed streams', async () => {
    const { l, ctx } = invoicesBacklog();
    const sending = offsetsSink();
    const s = openUpdates(ctx, updatesRequest(l), ANY, sending);
    const small = offsetsSink();
    const t = openUpdates(ctx, updatesRequest(l, { beginExclusive: BACKLOG - 1 }), ANY, small);
    // The small stream sent its backlog in the call and follows the ledger from the hub.
    expect(small.offsets).toEqual([BACKLOG]);
    const counts: number[] = [];
    ctx.hub.setDropEvery(10, (n) => counts.push(n));
    await l.clock.advance(10);
    expect(counts).toEqual([2]);
    expect(sending.dropped).toBe(true);
    expect(small.dropped).toBe(true);
    await s.sent;
    expect(sending.offsets).toEqual(range(1, ELEMENTS_PER_TURN));
    // Neither is open any more: the next tick finds nothing to drop.
    await l.clock.advance(10);
    expect(counts).toEqual([2]);
    s.cancel();
    t.cancel();
    ctx.hub.setDropEvery(undefined);
  });

  it('reaches a descending stream and a completion stream while they send', async () => {
    const l = invoiceLedger();
    for (let i = 0; i < BACKLOG; i++) l.engine.recordCompletion(rejection(l, i));
    for (let i = 0; i < BACKLOG; i++) create(l, `INV-${i}`);
    const ctx = contextOf(l);
    const completions = offsetsSink();
    const c = issuerCompletions(ctx, l, completions);
    const descending = offsetsSink();
    const end = l.engine.ledgerEnd();
    const d = openUpdates(
      ctx,
      updatesRequest(l, { endInclusive: end, descendingOrder: true }),
      ANY,
      descending,
    );
    const counts: number[] = [];
    ctx.hub.setDropEvery(10, (n) => counts.push(n));
    await l.clock.advance(10);
    expect(counts).toEqual([2]);
    await Promise.all([c.sent, d.sent]);
    expect(completions.offsets).toEqual(range(1, ELEMENTS_PER_TURN));
    expect(descending.offsets).toEqual(range(end - ELEMENTS_PER_TURN + 1, end).reverse());
    c.cancel();
    d.cancel();
    ctx.hub.setDropEvery(undefined);
  });

  it('a stream that has sent its backlog is no longer counted as sending', async () => {
    const { l, ctx } = invoicesBacklog();
    const bounded = offsetsSink();
    const b = openUpdates(ctx, updatesRequest(l, { endInclusive: BACKLOG }), ANY, bounded);
    await b.sent;
    const cancelled = offsetsSink();
    openUpdates(ctx, updatesRequest(l), ANY, cancelled).cancel();
    const counts: number[] = [];
    ctx.hub.setDropEvery(10, (n) => counts.push(n));
    await l.clock.advance(10);
    expect(counts).toEqual([]);
    expect(bounded.dropped).toBe(false);
    expect(cancelled.dropped).toBe(false);
    ctx.hub.setDropEvery(undefined);
  });
});

describe('the idle cut-off of a list', () => {
  /** The list's answer, and whether it has come yet. */
  function list(ctx: SandboxContext, query: string, open: (sink: StreamSink) => OpenedStream) {
    const state = { settled: false };
    const answer = collectList(ctx, new URLSearchParams(query), new AbortController().signal, open)
      .then((r) => JSON.parse('json' in r ? r.json : 'null') as unknown[])
      .finally(() => (state.settled = true));
    return { answer, state };
  }
  const nextTurn = () => new Promise<void>((r) => setImmediate(r));

  it('does not end a bounded stream without stream_idle_timeout_ms, however long its backlog takes', async () => {
    const { l, ctx } = invoicesBacklog();
    const updates = list(ctx, '', (sink) =>
      openUpdates(ctx, updatesRequest(l, { endInclusive: BACKLOG }), ANY, sink),
    );
    const snapshot = list(ctx, '', (sink) =>
      openActiveContracts(
        ctx,
        { activeAtOffset: BACKLOG, eventFormat: wildcard(l.issuer) },
        ANY,
        sink,
      ),
    );
    // Between two turns of the backlog, far more than the list wait time goes by.
    await nextTurn();
    await l.clock.advance(10 * LIST_WAIT_MS);
    expect(await updates.answer).toHaveLength(BACKLOG);
    expect(await snapshot.answer).toHaveLength(BACKLOG);
  });

  it('ends an open-ended stream that sent nothing for the wait time since it started, backlog or not', async () => {
    // Transactions only: the issuer's completion stream reads them all and sends nothing.
    const { l, ctx } = invoicesBacklog();
    const completions = list(ctx, '', (sink) => issuerCompletions(ctx, l, sink));
    await nextTurn();
    await l.clock.advance(LIST_WAIT_MS - 1);
    expect(completions.state.settled).toBe(false);
    await l.clock.advance(1);
    expect(completions.state.settled).toBe(true);
    expect(await completions.answer).toEqual([]);
  });

  it('applies stream_idle_timeout_ms to a bounded stream too', async () => {
    const { l, ctx } = invoicesBacklog();
    const updates = list(ctx, 'stream_idle_timeout_ms=100', (sink) =>
      openUpdates(ctx, updatesRequest(l, { endInclusive: BACKLOG }), ANY, sink),
    );
    // Two turns sent; the third comes only after 100 ms without an element.
    await nextTurn();
    await l.clock.advance(100);
    expect(await updates.answer).toHaveLength(2 * ELEMENTS_PER_TURN);
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
