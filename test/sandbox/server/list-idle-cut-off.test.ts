import { describe, expect, it } from 'vitest';
import { collectList } from '../../../src/sandbox/server/list-collector.js';
import {
  ELEMENTS_PER_TURN,
  type OpenedStream,
  type StreamSink,
} from '../../../src/sandbox/server/paced-send.js';
import type { SandboxContext } from '../../../src/sandbox/server/sandbox-context.js';
import { openActiveContracts, openUpdates } from '../../../src/sandbox/server/stream-openers.js';
import {
  ANY,
  BACKLOG,
  invoicesBacklog,
  issuerCompletions,
  LIST_WAIT_MS,
  updatesRequest,
} from './backlog-fixture.js';
import { wildcard } from './sandbox-fixture.js';

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
