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
import { completionFor, type FrameSink, type Subscription } from './stream-hub.js';

export type StreamSink = FrameSink & {
  /** False once the sink has all it wants (a list at its limit): replay stops early. */
  wantsMore(): boolean;
};

export type OpenedStream = {
  /** Bounded streams are complete when `open*` returns; open-ended ones stay subscribed. */
  readonly openEnded: boolean;
  cancel(): void;
};

const CLOSED: OpenedStream = { openEnded: false, cancel: () => undefined };

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
  const upTo = end ?? ctx.engine.ledgerEnd();
  const formatKey = format === undefined ? '' : JSON.stringify(format);
  if (format !== undefined) {
    const txs = ctx.engine.transactionsBetween(begin, upTo);
    const ordered = descending ? [...txs].reverse() : txs;
    for (const tx of ordered) {
      if (!sink.wantsMore()) break;
      const frame = ctx.hub.frameCache.frame(tx, format, formatKey);
      if (frame === null) continue;
      sink.send(frame);
    }
  }
  if (end !== undefined) return CLOSED;
  const sub: Subscription = {
    kind: 'updates',
    format,
    formatKey,
    sink,
    seen: upTo,
    checkpointed: begin,
    lastActivityMs: ctx.clock.now(),
  };
  return { openEnded: true, cancel: ctx.hub.add(sub) };
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
  const upTo = ctx.engine.ledgerEnd();
  for (const entry of ctx.engine.entriesBetween(begin, upTo)) {
    if (!sink.wantsMore()) break;
    if (entry.kind !== 'completion') continue;
    const c = completionFor(entry.completion, userId, parties);
    if (c === undefined) continue;
    sink.send(completionFrame(c));
  }
  const sub: Subscription = {
    kind: 'completions',
    userId,
    parties,
    sink,
    seen: upTo,
    checkpointed: begin,
    lastActivityMs: ctx.clock.now(),
  };
  return { openEnded: true, cancel: ctx.hub.add(sub) };
}

/** The active contracts snapshot of a GetActiveContractsRequest, serialised. */
export function activeContractFrames(
  ctx: SandboxContext,
  body: unknown,
  principal: Principal,
): { readonly offset: number; readonly format: EventFormat; readonly frames: string[] } {
  const o = asObject(body);
  const offset = optionalOffset(o, 'activeAtOffset', 'active_at_offset') ?? 0;
  const format = parseAcsEventFormat(o);
  authorizeEventFormat(ctx, principal, format);
  checkOffset(ctx, offset, 'active_at_offset');
  const frames = ctx.engine
    .activeContractsAt(offset, format)
    .map((c) => JSON.stringify(activeContractWithNulls(c)));
  return { offset, format, frames };
}
