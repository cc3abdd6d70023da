import { describe, expect, it } from 'vitest';
import { ELEMENTS_PER_TURN } from '../../../src/sandbox/server/paced-send.js';
import { openUpdates } from '../../../src/sandbox/server/stream-openers.js';
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
