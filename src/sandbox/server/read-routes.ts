import { createHash } from 'node:crypto';
import type { EventFormat, TransactionFormat } from '../../ledger/wire/wire-types.js';
import type { CommittedTransaction } from '../engine/committed-transaction.js';
import { activeContractWithNulls, eventsByContractIdWithNulls } from './canton-nulls.js';
import { transactionJson } from './frames.js';
import { collectList } from './list-collector.js';
import {
  asObject,
  BodyDecodeError,
  invalidArgument,
  missingField,
  optionalOffset,
  parseEventFormat,
  parseTransactionFormat,
  parseUpdateFormat,
  stringList,
  type JsonObject,
} from './request-parsing.js';
import type { Handler, RouteContext } from './route-table.js';
import type { SandboxContext } from './sandbox-context.js';
import type { Principal } from './sandbox-auth.js';
import { SandboxApiError } from './sandbox-api-error.js';
import {
  authorizeEventFormat,
  checkOffset,
  openActiveContracts,
  openCompletions,
  openUpdates,
} from './stream-openers.js';

function abortOnClose(ctx: RouteContext): AbortSignal {
  const controller = new AbortController();
  ctx.res.on('close', () => controller.abort());
  return controller.signal;
}

function updateNotFound(what: string): SandboxApiError {
  return new SandboxApiError('UPDATE_NOT_FOUND', `Update not found, or not visible. ${what}`, {
    definiteAnswer: false,
  });
}

function lookupUpdate(
  s: SandboxContext,
  principal: Principal,
  tx: CommittedTransaction | undefined,
  format: TransactionFormat | undefined,
  what: string,
): string {
  if (format !== undefined) authorizeEventFormat(s, principal, format.eventFormat);
  if (tx === undefined || format === undefined) throw updateNotFound(what);
  const projected = s.engine.projectTransaction(tx, format);
  if (projected === null) throw updateNotFound(what);
  return transactionJson(projected);
}

/** The deprecated transaction lookups: requestingParties (wildcard, ACS_DELTA) or transactionFormat. */
function legacyTransactionFormat(o: JsonObject): TransactionFormat {
  if (o.transactionFormat !== undefined && o.transactionFormat !== null) {
    return parseTransactionFormat(o.transactionFormat, 'transactionFormat');
  }
  const parties = stringList(o, 'requestingParties');
  if (parties.length === 0) throw missingField('requesting_parties');
  const filtersByParty: Record<string, object> = {};
  for (const p of parties) filtersByParty[p] = { cumulative: [] };
  return {
    eventFormat: { filtersByParty, verbose: true },
    transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA',
  };
}

type FoundTransaction = { tx: CommittedTransaction | undefined; what: string };

/** How a transaction lookup reads its format and wraps the transaction it answers with. */
type LookupAnswer = {
  readonly format: (o: JsonObject) => TransactionFormat | undefined;
  readonly body: (transactionJson: string) => string;
};

/** `update-by-*`: the request's updateFormat; `{"update":{"Transaction":{"value":…}}}`. */
const AS_UPDATE: LookupAnswer = {
  format: (o) => {
    if (o.updateFormat === undefined || o.updateFormat === null)
      throw missingField('update_format');
    return parseUpdateFormat(o.updateFormat, 'updateFormat').transactions;
  },
  body: (json) => `{"update":{"Transaction":{"value":${json}}}}`,
};

/** The deprecated `transaction-by-*`: the legacy format; `{"transaction":…}`. */
const AS_LEGACY_TRANSACTION: LookupAnswer = {
  format: legacyTransactionFormat,
  body: (json) => `{"transaction":${json}}`,
};

function byId(s: SandboxContext): (o: JsonObject) => FoundTransaction {
  return (o) => {
    const id = requiredString(o, 'updateId', 'update_id');
    return { tx: s.engine.transactionById(id), what: `update id: ${id}` };
  };
}

function byOffset(s: SandboxContext): (o: JsonObject) => FoundTransaction {
  return (o) => {
    const offset = requiredOffset(o, 'offset', 'offset');
    return { tx: s.engine.transactionByOffset(offset), what: `offset: ${offset}` };
  };
}

/** A transaction lookup: `find` reads the key from the body, `answer` the format and the shape. */
function transactionLookup(
  s: SandboxContext,
  answer: LookupAnswer,
  find: (o: JsonObject) => FoundTransaction,
): Handler {
  return (ctx) => {
    const o = asObject(ctx.body);
    const { tx, what } = find(o);
    const json = lookupUpdate(s, ctx.principal, tx, answer.format(o), what);
    return { status: 200, json: answer.body(json) };
  };
}

function requiredOffset(o: JsonObject, key: string, field: string): number {
  const v = optionalOffset(o, key, field);
  if (v === undefined) throw missingField(field);
  if (v === 0) throw invalidField0(field);
  return v;
}

function invalidField0(field: string): SandboxApiError {
  return invalidArgument(`${field} must be a positive integer`);
}

function requiredString(o: JsonObject, key: string, field: string): string {
  const v = o[key];
  if (v === undefined || v === null || v === '') throw missingField(field);
  if (typeof v !== 'string') throw new BodyDecodeError(`expected a string at '${key}'`);
  return v;
}

/**
 * A page token: the snapshot offset, a hash of the event format, and where the previous page ended
 * (creation offset `c` and node id `n` of its last contract), so the next page starts there.
 */
type PageToken = { readonly o: number; readonly f: string; readonly c: number; readonly n: number };

function formatHash(format: EventFormat): string {
  return createHash('sha256').update(JSON.stringify(format)).digest('hex').slice(0, 16);
}

function encodePageToken(token: PageToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodePageToken(token: string): PageToken {
  try {
    const t = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as PageToken;
    if (
      typeof t.o === 'number' &&
      typeof t.f === 'string' &&
      typeof t.c === 'number' &&
      typeof t.n === 'number'
    ) {
      return t;
    }
  } catch {
    // fall through
  }
  throw invalidArgument('Invalid page token');
}

export function readRoutes(s: SandboxContext): Record<string, Handler> {
  const activeContractsPage: Handler = (ctx) => {
    const o = asObject(ctx.body);
    if (o.eventFormat === undefined || o.eventFormat === null) throw missingField('event_format');
    const format = parseEventFormat(o.eventFormat, 'eventFormat');
    const tokenText =
      typeof o.pageToken === 'string' && o.pageToken !== '' ? o.pageToken : undefined;
    const token = tokenText === undefined ? undefined : decodePageToken(tokenText);
    const requested = optionalOffset(o, 'activeAtOffset', 'active_at_offset');
    const offset = token?.o ?? requested ?? s.engine.ledgerEnd();
    const hash = formatHash(format);
    if (
      token !== undefined &&
      (token.f !== hash || (requested !== undefined && requested !== token.o))
    ) {
      throw invalidArgument(
        'The page token does not match the request (activeAtOffset and eventFormat must stay the same)',
      );
    }
    const sizeRaw = o.maxPageSize;
    const size =
      typeof sizeRaw === 'number' && sizeRaw > 0
        ? Math.min(Math.floor(sizeRaw), s.limits.maxPageSize)
        : s.limits.defaultPageSize;
    authorizeEventFormat(s, ctx.principal, format);
    checkOffset(s, offset, 'active_at_offset');
    const after = token === undefined ? undefined : { offset: token.c, nodeId: token.n };
    const page = s.engine.activeContractsPage(offset, format, after, size);
    const nextToken =
      page.next === undefined
        ? undefined
        : encodePageToken({ o: offset, f: hash, c: page.next.offset, n: page.next.nodeId });
    // The last page says so with `"nextPageToken": null` (an Option in Canton's codec).
    const body = {
      activeContracts: page.activeContracts.map(activeContractWithNulls),
      activeAtOffset: offset,
      nextPageToken: nextToken ?? null,
    };
    return { status: 200, json: JSON.stringify(body) };
  };

  return {
    'POST /v2/updates': (ctx) =>
      collectList(s, ctx.query, abortOnClose(ctx), (sink) =>
        openUpdates(s, ctx.body, ctx.principal, sink),
      ),
    'POST /v2/commands/completions': (ctx) =>
      collectList(s, ctx.query, abortOnClose(ctx), (sink) =>
        openCompletions(s, 'legacy', ctx.body, ctx.principal, sink),
      ),
    'POST /v2/commands/command-completions': (ctx) =>
      collectList(s, ctx.query, abortOnClose(ctx), (sink) =>
        openCompletions(s, 'v35', ctx.body, ctx.principal, sink),
      ),
    'POST /v2/state/active-contracts': (ctx) =>
      collectList(s, ctx.query, abortOnClose(ctx), (sink) =>
        openActiveContracts(s, ctx.body, ctx.principal, sink),
      ),
    'POST /v2/state/active-contracts-page': activeContractsPage,
    'GET /v2/state/active-contracts-page': activeContractsPage,
    'POST /v2/updates/update-by-offset': transactionLookup(s, AS_UPDATE, byOffset(s)),
    'POST /v2/updates/update-by-id': transactionLookup(s, AS_UPDATE, byId(s)),
    'POST /v2/updates/transaction-by-id': transactionLookup(s, AS_LEGACY_TRANSACTION, byId(s)),
    'POST /v2/updates/transaction-by-offset': transactionLookup(
      s,
      AS_LEGACY_TRANSACTION,
      byOffset(s),
    ),
    'POST /v2/events/events-by-contract-id': (ctx) => {
      const o = asObject(ctx.body);
      const cid = requiredString(o, 'contractId', 'contract_id');
      if (o.eventFormat === undefined || o.eventFormat === null) throw missingField('event_format');
      const format = parseEventFormat(o.eventFormat, 'eventFormat');
      authorizeEventFormat(s, ctx.principal, format);
      const res = s.engine.eventsByContractId(cid, format);
      if (res === null) {
        throw new SandboxApiError(
          'CONTRACT_EVENTS_NOT_FOUND',
          'Contract events not found, or not visible.',
          {
            resources: [['CONTRACT_ID', cid]],
          },
        );
      }
      return { status: 200, json: JSON.stringify(eventsByContractIdWithNulls(res)) };
    },
    'GET /v2/state/ledger-end': () => ({ status: 200, json: `{"offset":${s.engine.ledgerEnd()}}` }),
    'GET /v2/state/latest-pruned-offsets': () => {
      const p = s.engine.prunedUpToInclusive();
      return {
        status: 200,
        json: `{"participantPrunedUpToInclusive":${p},"allDivulgedContractsPrunedUpToInclusive":${p}}`,
      };
    },
    'GET /v2/state/connected-synchronizers': (ctx) => {
      const party = ctx.query.get('party');
      const participant = ctx.query.get('participantId');
      const hidden =
        (party !== null && party !== '' && s.engine.party(party) === undefined) ||
        (participant !== null && participant !== '' && participant !== s.participantId);
      const list = hidden
        ? []
        : [
            {
              synchronizerAlias: 'sandbox',
              synchronizerId: s.engine.synchronizerId,
              permission: 'PARTICIPANT_PERMISSION_SUBMISSION',
            },
          ];
      return { status: 200, json: JSON.stringify({ connectedSynchronizers: list }) };
    },
  };
}
