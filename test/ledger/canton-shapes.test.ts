// Contract tests: the client fed what a real Canton 3.5 participant sends (canton-samples.ts),
// over HTTP (undici MockAgent) and over real websockets. Every `null` of an API structure must
// come out missing; every `null` inside a Daml value must come out as is.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { classify } from '../../src/ledger/classify.js';
import { isValueTranscodingFailure } from '../../src/ledger/error-checks.js';
import { eventFormat } from '../../src/ledger/filters.js';
import { LedgerApiError } from '../../src/ledger/ledger-api-error.js';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import { streamCompletions } from '../../src/ledger/ws/completion-stream.js';
import { streamUpdates } from '../../src/ledger/ws/update-stream.js';
import type { JsTransaction } from '../../src/ledger/wire/wire-types.js';
import { FakeWsServer } from '../support/fake-ws-server.js';
import * as C from './canton-samples.js';
import { MockLedger, ORIGIN } from './mock-ledger.js';
import { UPDATE_FORMAT } from './ws/ws-fixtures.js';
import { waitFor } from '../support/wait-for.js';
import { caught, drain, testContext } from './ws/ws-test-helpers.js';

const FORMAT = eventFormat({ parties: [C.ALICE] });

function keysOf(value: unknown): string[] {
  return Object.keys(value as object);
}

describe('Canton shapes over HTTP', () => {
  let m: MockLedger;
  let client: LedgerClient;
  beforeEach(async () => {
    m = new MockLedger();
    client = await LedgerClient.create({ url: ORIGIN, dispatcher: m.agent });
  });
  afterEach(async () => {
    await client.close();
    await m.close();
  });

  it('events-by-contract-id of an active contract: "archived": null is missing', async () => {
    m.replyJson(200, C.eventsOfActiveContract);
    const res = await client.eventsByContractId({ contractId: C.CID, eventFormat: FORMAT });
    expect(res.archived).toBeUndefined();
    expect('archived' in res).toBe(false);
    const created = res.created!.createdEvent;
    expect(created.contractId).toBe(C.CID);
    // No key: the whole-value null is "absent"...
    expect('contractKey' in created).toBe(false);
    // ...but inside the Daml value a None stays null and a trailing None stays left out.
    expect(created.createArgument).toEqual(C.invoiceArgument);
    expect((created.createArgument as Record<string, unknown>).note).toBeNull();
    expect('memo' in (created.createArgument as object)).toBe(false);
    expect((created.createArgument as Record<string, unknown>).reminder).toEqual([[]]);
  });

  it('active-contracts-page: the page mode ends at "nextPageToken": null', async () => {
    for (const page of C.acsPages) m.replyJson(200, page);
    const got: unknown[] = [];
    for await (const c of client.activeContracts(
      { activeAtOffset: 20, eventFormat: FORMAT },
      { mode: 'page', pageSize: 2 },
    )) {
      got.push(c);
      if (got.length > 10) throw new Error('the page mode did not stop');
    }
    expect(got).toHaveLength(3);
    expect(m.calls).toHaveLength(2);
    expect((m.calls[0]!.body as Record<string, unknown>).pageToken).toBeUndefined();
    expect((m.calls[1]!.body as Record<string, unknown>).pageToken).toBe('cGFnZTI=');
  });

  it('update-by-id: transaction and event nulls are missing, Daml-value nulls are kept', async () => {
    m.replyJson(200, { update: { Transaction: { value: C.transaction } } });
    const res = await client.updateById({
      updateId: C.transaction.updateId,
      updateFormat: UPDATE_FORMAT,
    });
    const tx = (res.update as { Transaction: { value: JsTransaction } }).Transaction.value;
    expect(keysOf(tx)).not.toContain('traceContext');
    expect(tx.externalTransactionHash).toBeUndefined();
    expect(tx.paidTrafficCost).toBeUndefined();
    const exercised = (tx.events[1] as { ExercisedEvent: Record<string, unknown> }).ExercisedEvent;
    expect('interfaceId' in exercised).toBe(false);
    expect(exercised.choiceArgument).toEqual({ channel: null, urgent: false });
    // An Optional-returning choice that returned None: the Daml value null, not "no result".
    expect('exerciseResult' in exercised).toBe(true);
    expect(exercised.exerciseResult).toBeNull();
  });

  it('keyed contract: the key value keeps its nulls; a failed view has no viewValue', async () => {
    m.replyJson(200, { update: { Transaction: { value: C.tracedTransaction } } });
    const res = await client.updateByOffset({ offset: 10, updateFormat: UPDATE_FORMAT });
    const tx = (res.update as { Transaction: { value: JsTransaction } }).Transaction.value;
    expect(tx.traceContext).toEqual({ traceparent: C.tracedTransaction.traceContext.traceparent });
    const created = (tx.events[0] as { CreatedEvent: Record<string, unknown> }).CreatedEvent;
    expect(created.contractKey).toEqual({ scope: null, owner: C.ALICE });
    const views = created.interfaceViews as Record<string, unknown>[];
    expect(views[0]!.viewValue).toEqual({ amount: '999.9900000000', dueBy: null });
    expect('viewValue' in views[1]!).toBe(false);
    expect(views[1]!.viewStatus).toMatchObject({ code: 13 });
  });

  it('a gRPC-side error: nulls read as null, "ErrorResource(CONTRACT_ID)" as CONTRACT_ID', async () => {
    m.replyJson(404, C.contractNotFound);
    const err = await caught(() => client.submit({} as never));
    expect(err).toBeInstanceOf(LedgerApiError);
    const e = err as LedgerApiError;
    expect(e.status).toBe(404);
    expect(e.error.resources).toEqual([['CONTRACT_ID', C.CID]]);
    expect(e.error.retryInfo).toBeNull();
    expect(e.error.definiteAnswer).toBeNull();
    expect(e.definiteAnswer).toBe(false);
    expect(classify(e)).toBe('stale');
  });

  it('a JSON-layer error: the bare resource form and null ids', async () => {
    m.replyJson(404, C.jsonLayerNotFound);
    const e = (await caught(() => client.submit({} as never))) as LedgerApiError;
    expect(e.error.resources).toEqual([['CONTRACT_ID', C.CID]]);
    expect(e.error.correlationId).toBeNull();
    expect(e.error.traceId).toBeNull();
    expect(e.error.grpcCodeValue).toBeNull();
  });

  it('500 LEDGER_API_INTERNAL_ERROR on submit: a LedgerApiError with status and code intact', async () => {
    m.replyJson(500, C.transcodingFailure);
    const err = await caught(() => client.submit({} as never));
    expect(err).toBeInstanceOf(LedgerApiError);
    const e = err as LedgerApiError;
    expect(e.status).toBe(500);
    expect(e.request).toBe('POST /v2/commands/async/submit');
    expect(e.error).toMatchObject({
      code: 'LEDGER_API_INTERNAL_ERROR',
      errorCategory: 4,
      grpcCodeValue: 13,
      definiteAnswer: false,
      correlationId: null,
    });
    expect(e.definiteAnswer).toBe(false);
    expect(classify(e)).toBe('unknown-outcome');
    expect(isValueTranscodingFailure(e)).toBe(true);
  });

  it('the same 500 on a read is not a transcoding failure of a command', async () => {
    m.replyJson(500, C.transcodingFailure);
    const e = await caught(() => client.updateByOffset({ offset: 1, updateFormat: UPDATE_FORMAT }));
    expect(e).toBeInstanceOf(LedgerApiError);
    expect(isValueTranscodingFailure(e)).toBe(false);
  });
});

describe('Canton shapes over websockets', () => {
  let server: FakeWsServer;
  let stop: AbortController;
  beforeEach(async () => {
    server = await FakeWsServer.start();
    stop = new AbortController();
  });
  afterEach(async () => {
    stop.abort();
    await server.close();
  });

  it('update frames: API nulls are missing, Daml-value nulls are kept', async () => {
    const s = streamUpdates(
      testContext(server.url),
      { beginExclusive: 6, updateFormat: UPDATE_FORMAT },
      { signal: stop.signal },
    );
    const { got } = drain(s);
    const conn = await server.nextConnection();
    await conn.request();
    await conn.send({ update: { Transaction: { value: C.transaction } } });
    await conn.send({ update: { OffsetCheckpoint: { value: C.checkpoint } } });
    await waitFor(
      () => got.length,
      (n) => n === 2,
      2_000,
      'got: 2',
    );
    const first = got[0]!;
    if (first.kind !== 'transaction') throw new Error('expected a transaction');
    const tx = first.transaction;
    expect(keysOf(tx)).not.toContain('traceContext');
    expect(keysOf(tx)).not.toContain('paidTrafficCost');
    const created = (tx.events[0] as { CreatedEvent: Record<string, unknown> }).CreatedEvent;
    expect('contractKey' in created).toBe(false);
    expect(created.createArgument).toEqual(C.invoiceArgument);
    const exercised = (tx.events[1] as { ExercisedEvent: Record<string, unknown> }).ExercisedEvent;
    expect('interfaceId' in exercised).toBe(false);
    expect(exercised.exerciseResult).toBeNull();
    expect(got[1]).toMatchObject({ kind: 'checkpoint', offset: 11 });
  });

  it('completion frames: null trace context and traffic cost are missing', async () => {
    const s = streamCompletions(
      testContext(server.url),
      { userId: 'ledgerbot', parties: [C.ALICE], beginExclusive: 11 },
      { signal: stop.signal },
    );
    const { got } = drain(s);
    const conn = await server.nextConnection();
    await conn.request();
    await conn.send({ completionResponse: { Completion: { value: C.completion } } });
    await waitFor(
      () => got.length,
      (n) => n === 1,
      2_000,
      'got: 1',
    );
    const c = got[0]!;
    if (c.kind !== 'completion') throw new Error('expected a completion');
    expect(keysOf(c.completion)).not.toContain('traceContext');
    expect(c.completion.paidTrafficCost).toBeUndefined();
    expect(c.offset).toBe(12);
  });

  it('an error frame with nulls and the case-class resource form ends the stream readably', async () => {
    const s = streamUpdates(
      testContext(server.url),
      { beginExclusive: 6, updateFormat: UPDATE_FORMAT },
      { signal: stop.signal },
    );
    const { ended } = drain(s);
    const conn = await server.nextConnection();
    await conn.request();
    await conn.send(C.contractNotFound);
    const { error } = await ended;
    expect(error).toBeInstanceOf(LedgerApiError);
    const e = error as LedgerApiError;
    expect(e.status).toBeUndefined();
    expect(e.error.code).toBe('CONTRACT_NOT_FOUND');
    expect(e.error.resources).toEqual([['CONTRACT_ID', C.CID]]);
    expect(e.error.retryInfo).toBeNull();
  });
});
