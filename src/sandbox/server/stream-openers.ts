import type { EventFormat, TransactionFormat } from '../../ledger/wire/wire-types.js';
import { activeContractWithNulls } from './canton-nulls.js';
import { completionFrame } from './frames.js';
import {
  asObject,
  formatParties,
  invalidArgument,
  missingField,
  optionalOffset,
  parseAcsEventFormat,
  parseUpdateSelection,
  stringList,
} from './request-parsing.js';
import type { SandboxContext } from './sandbox-context.js';
import type { Principal } from './sandbox-auth.js';
import { fromEngineError } from './sandbox-api-error.js';
import type { LogEntry } from '../engine/engine-types.js';
import { pacedSend, type OpenedStream, type StreamSink } from './paced-send.js';
import { completionFor, type Subscription } from './stream-hub.js';

const CLOSED: OpenedStream = {
  openEnded: false,
  sent: Promise.resolve(),
  cancel: () => undefined,
};

/** Checks the read rights and the filters of an event format (throws the Canton errors). */
export function authorizeEventFormat(
  ctx: SandboxContext,
  principal: Principal,
  format: EventFormat,
): void {
  const { parties, anyParty } = formatParties(format);
  ctx.auth.requireReadAs(principal, parties);
  if (anyParty) ctx.auth.requireReadAsAnyParty(principal);
  const err = ctx.engine.validateEventFormat(format);
  if (err !== null) throw fromEngineError(err);
}

export function checkOffset(ctx: SandboxContext, offset: number, field: string): void {
  const err = ctx.engine.checkOffset(offset, field);
  if (err !== null) throw fromEngineError(err);
}

/** `/v2/updates` (websocket and list): replay from beginExclusive, then tail unless bounded. */
export function openUpdates(
  ctx: SandboxContext,
  body: unknown,
  principal: Principal,
  sink: StreamSink,
): OpenedStream {
  const o = asObject(body);
  const begin = optionalOffset(o, 'beginExclusive', 'begin_exclusive') ?? 0;
  const end = optionalOffset(o, 'endInclusive', 'end_inclusive');
  const selection = parseUpdateSelection(o);
  const format: TransactionFormat | undefined = selection.transactions;
  if (format !== undefined) authorizeEventFormat(ctx, principal, format.eventFormat);
  checkOffset(ctx, begin, 'begin_exclusive');
  if (end !== undefined) {
    checkOffset(ctx, end, 'end_inclusive');
    if (end < begin) {
      throw invalidArgument(
        `end_inclusive (${end}) must be greater than or equal to begin_exclusive (${begin})`,
      );
    }
  }
  const descending = o.descendingOrder === true;
  if (descending && end === undefined) {
    throw invalidArgument('descending_order requires end_inclusive to be set');
  }
  const formatKey = format === undefined ? '' : JSON.stringify(format);
  if (descending) {
    // Bounded (end_inclusive is required): the latest transactions first, turn by turn.
    if (format === undefined || end === undefined) return CLOSED;
    let upper = end;
    return ledgerStream(ctx, sink, false, (max) => {
      const txs = ctx.engine.transactionsBetween(begin, upper, max, true);
      for (const tx of txs) {
        if (!sink.wantsMore()) return true;
        const frame = ctx.hub.frameCache.frame(tx, format, formatKey);
        if (frame !== null) sink.send(frame);
        upper = tx.offset - 1;
      }
      return txs.length < max;
    });
  }
  return followLog(ctx, sink, begin, end, {
    send: (entry) => {
      if (format === undefined || entry.kind !== 'transaction') return;
      const frame = ctx.hub.frameCache.frame(entry.transaction, format, formatKey);
      if (frame !== null) sink.send(frame);
    },
    subscription: (seen) => ({
      kind: 'updates',
      format,
      formatKey,
      sink,
      seen,
      checkpointed: begin,
      lastActivityMs: ctx.clock.now(),
    }),
  });
}

type LogFollower = {
  /** Sends what the stream shows of one log entry, if anything. */
  readonly send: (entry: LogEntry) => void;
  /** The hub subscription that takes over once the backlog is sent, at the ledger end `seen`. */
  readonly subscription: (seen: number) => Subscription;
};

/**
 * Sends the log entries after `begin` (up to `end`, or to the ledger end as it moves) turn by
 * turn; an open-ended stream then subscribes to the hub in the turn that reached the ledger end,
 * so that no entry is sent twice or missed.
 */
function followLog(
  ctx: SandboxContext,
  sink: StreamSink,
  begin: number,
  end: number | undefined,
  follower: LogFollower,
): OpenedStream {
  let next = begin;
  let unsubscribe: (() => void) | undefined;
  const opened = ledgerStream(ctx, sink, end === undefined, (max) => {
    const upTo = end ?? ctx.engine.ledgerEnd();
    // One more than a turn sends, to see whether the turn would end inside an offset.
    const entries = ctx.engine.entriesBetween(next, upTo, max + 1);
    const full = entries.length > max;
    const count = full ? wholeOffsets(entries, max) : entries.length;
    for (let i = 0; i < count; i++) {
      if (!sink.wantsMore()) return true;
      const entry = entries[i]!;
      follower.send(entry);
      next = entry.offset;
    }
    if (full) return false;
    if (end === undefined && sink.wantsMore()) {
      unsubscribe = ctx.hub.add(follower.subscription(upTo));
    }
    return true;
  });
  return {
    ...opened,
    cancel: () => {
      opened.cancel();
      unsubscribe?.();
    },
  };
}

/**
 * An update or completion stream sending its backlog with `pacedSend`: until it has sent it (or
 * is cancelled), the hub counts it among the open streams, for the drop fault (closeStreamsEveryMs).
 */
function ledgerStream(
  ctx: SandboxContext,
  sink: StreamSink,
  openEnded: boolean,
  pull: (max: number) => boolean,
): OpenedStream {
  const unregister = ctx.hub.addSending(sink);
  const sending = pacedSend(sink, pull);
  // Settled in the turn that ends the backlog, before any timer (the drop fault's) can run.
  void sending.sent.then(unregister, unregister);
  return {
    openEnded,
    sent: sending.sent,
    cancel: () => {
      sending.stop();
      unregister();
    },
  };
}

/**
 * Completion streams: `legacy` is CompletionStreamRequest (userId + non-empty parties), `v35` is
 * the 3.5 GetCompletionsRequest (parties optional with CanReadAsAnyParty). Always open-ended.
 */
export function openCompletions(
  ctx: SandboxContext,
  kind: 'legacy' | 'v35',
  body: unknown,
  principal: Principal,
  sink: StreamSink,
): OpenedStream {
  const o = asObject(body);
  const partyList = stringList(o, 'parties');
  let userId: string | undefined;
  let parties: ReadonlySet<string> | undefined;
  if (kind === 'legacy') {
    const given = typeof o.userId === 'string' && o.userId !== '' ? o.userId : undefined;
    userId = given ?? principal.userId;
    if (userId === undefined) throw missingField('user_id');
    ctx.auth.requireUser(principal, userId);
    if (partyList.length === 0) throw missingField('parties');
  }
  if (partyList.length === 0) {
    ctx.auth.requireReadAsAnyParty(principal);
  } else {
    ctx.auth.requireReadAs(principal, partyList);
    parties = new Set(partyList);
  }
  const begin = optionalOffset(o, 'beginExclusive', 'begin_exclusive') ?? 0;
  checkOffset(ctx, begin, 'begin_exclusive');
  return followLog(ctx, sink, begin, undefined, {
    send: (entry) => {
      if (entry.kind !== 'completion') return;
      const c = completionFor(entry.completion, userId, parties);
      if (c !== undefined) sink.send(completionFrame(c));
    },
    subscription: (seen) => ({
      kind: 'completions',
      userId,
      parties,
      sink,
      seen,
      checkpointed: begin,
      lastActivityMs: ctx.clock.now(),
    }),
  });
}

/**
 * How many of the first `max` entries a turn sends: a transaction and its completion share an
 * offset and the next turn reads after the last offset sent, so a turn that would end between two
 * entries of one offset leaves that offset's entries to the next turn.
 */
function wholeOffsets(entries: readonly LogEntry[], max: number): number {
  let count = max;
  while (count > 0 && entries[count]!.offset === entries[count - 1]!.offset) count--;
  return count === 0 ? max : count;
}

/** `/v2/state/active-contracts` (websocket and list): the snapshot at `activeAtOffset`. */
export function openActiveContracts(
  ctx: SandboxContext,
  body: unknown,
  principal: Principal,
  sink: StreamSink,
): OpenedStream {
  const o = asObject(body);
  const offset = optionalOffset(o, 'activeAtOffset', 'active_at_offset') ?? 0;
  const format = parseAcsEventFormat(o);
  authorizeEventFormat(ctx, principal, format);
  checkOffset(ctx, offset, 'active_at_offset');
  const contracts = ctx.engine.activeContractsAt(offset, format);
  let next = continuationOf(o, offset);
  const sending = pacedSend(sink, (max) => {
    const stop = Math.min(contracts.length, next + max);
    while (next < stop && sink.wantsMore()) {
      // Canton 3.5 gives each element the token that resumes after it.
      const element = {
        ...(activeContractWithNulls(contracts[next]!) as object),
        streamContinuationToken: continuationToken(offset, next),
      };
      next++;
      sink.send(JSON.stringify(element));
    }
    return next >= contracts.length;
  });
  return { openEnded: false, sent: sending.sent, cancel: sending.stop };
}

/**
 * The sandbox's continuation token: opaque to clients (base64, as Canton's bytes are in JSON),
 * it names the snapshot's offset and the element after which a request with it resumes.
 */
function continuationToken(offset: number, index: number): string {
  return Buffer.from(JSON.stringify({ at: offset, after: index })).toString('base64');
}

/** Where a request's `streamContinuationToken` resumes the snapshot: 0 without one. */
function continuationOf(o: Record<string, unknown>, offset: number): number {
  const token = o.streamContinuationToken;
  if (token === undefined || token === null || token === '') return 0;
  let decoded: unknown;
  try {
    decoded =
      typeof token === 'string'
        ? JSON.parse(Buffer.from(token, 'base64').toString('utf8'))
        : undefined;
  } catch {
    decoded = undefined;
  }
  const t = decoded as { at?: unknown; after?: unknown } | undefined;
  if (typeof t?.at !== 'number' || typeof t.after !== 'number' || !Number.isInteger(t.after)) {
    throw invalidArgument('Invalid stream continuation token');
  }
  if (t.at !== offset) {
    throw invalidArgument(
      `The stream continuation token is for active_at_offset ${t.at}, not ${offset}`,
    );
  }
  return t.after + 1;
}
