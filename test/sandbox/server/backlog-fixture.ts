// What the backlog tests share: a ledger engine with a backlog, the context the stream openers
// read of a sandbox, and a sink that records offsets.
import { ELEMENTS_PER_TURN, type StreamSink } from '../../../src/sandbox/server/paced-send.js';
import { SandboxAuth } from '../../../src/sandbox/server/sandbox-auth.js';
import type { SandboxContext } from '../../../src/sandbox/server/sandbox-context.js';
import { StreamHub } from '../../../src/sandbox/server/stream-hub.js';
import { openCompletions } from '../../../src/sandbox/server/stream-openers.js';
import {
  createInvoice as create,
  invoiceLedger,
  type InvoiceLedger,
} from '../engine/invoice-ledger.js';
import { wildcard } from './sandbox-fixture.js';

/** More than two turns of a backlog. */
export const BACKLOG = 2 * ELEMENTS_PER_TURN + 10;

export const ANY = { kind: 'any', userId: undefined } as const;

/** The list wait time of the context below (Canton's default). */
export const LIST_WAIT_MS = 500;

/** What the stream openers read of a sandbox: its engine, a hub over it, no auth. */
export function contextOf(l: InvoiceLedger): SandboxContext {
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
export function invoicesBacklog(): { l: InvoiceLedger; ctx: SandboxContext } {
  const l = invoiceLedger();
  for (let i = 0; i < BACKLOG; i++) create(l, `INV-${i}`);
  return { l, ctx: contextOf(l) };
}

export function offsetsSink(): StreamSink & { offsets: number[]; dropped: boolean } {
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
export function rejection(l: InvoiceLedger, i: number) {
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
export function issuerCompletions(ctx: SandboxContext, l: InvoiceLedger, sink: StreamSink) {
  return openCompletions(
    ctx,
    'v35',
    { userId: 'u', parties: [l.issuer], beginExclusive: 0 },
    ANY,
    sink,
  );
}

export const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

export function updatesRequest(l: InvoiceLedger, extra: Record<string, unknown> = {}) {
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
