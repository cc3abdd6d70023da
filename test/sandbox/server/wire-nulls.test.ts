import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import {
  createdEvent as cantonCreated,
  exercisedEvent as cantonExercised,
} from '../../ledger/canton-samples.js';
import { specValidator } from '../../support/spec-validator.js';
import {
  call,
  createInvoiceCommands,
  keylessCommands,
  nextCommandId,
  PKG,
  startTestSandbox,
  wildcard,
} from './sandbox-fixture.js';

// Canton prints the absent optionals of its API structures as null, never leaves them out
// (NOTES.md "Corrections", §0.4). These tests read the raw JSON off real sockets, so a key that
// is missing and a key that is null are told apart.

const openapi = specValidator('openapi-3.5');
const asyncapi = specValidator('asyncapi-3.5');
let sb: Sandbox;
let invoiceCid = '';
let acceptorCid = '';

type Json = Record<string, unknown>;

async function raw(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  const res = await fetch(sb.url + path, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, text: await res.text() };
}

/** The text frames of a bounded websocket stream, as they came. */
function rawFrames(path: string, request: unknown): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(sb.url.replace('http', 'ws') + path, ['daml.ws.auth']);
    const frames: string[] = [];
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`no close after ${frames.length} frames`));
    }, 5_000);
    ws.on('open', () => ws.send(JSON.stringify(request)));
    ws.on('message', (data: Buffer) => frames.push(data.toString('utf8')));
    ws.on('close', () => {
      clearTimeout(timer);
      resolve(frames);
    });
    ws.on('error', reject);
  });
}

/** A completion stream's first `n` frames, then the socket is closed. */
function firstFrames(path: string, request: unknown, n: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(sb.url.replace('http', 'ws') + path, ['daml.ws.auth']);
    const frames: string[] = [];
    ws.on('open', () => ws.send(JSON.stringify(request)));
    ws.on('message', (data: Buffer) => {
      frames.push(data.toString('utf8'));
      if (frames.length === n) {
        ws.close();
        resolve(frames);
      }
    });
    ws.on('error', reject);
  });
}

function createdEventOf(tx: Json, templateSuffix: string): Json {
  for (const e of tx.events as Json[]) {
    const c = e.CreatedEvent as Json | undefined;
    if (c !== undefined && (c.templateId as string).endsWith(templateSuffix)) return c;
  }
  throw new Error(`no created ${templateSuffix}`);
}

async function ledgerEnd(): Promise<number> {
  return ((await call(sb, 'GET', '/v2/state/ledger-end')).body as { offset: number }).offset;
}

beforeAll(async () => {
  sb = await startTestSandbox();
  const invoice = await call(sb, 'POST', '/v2/commands/submit-and-wait-for-transaction', {
    commands: createInvoiceCommands(sb, 'INV-NULL-1'),
  });
  expect(invoice.status, invoice.text).toBe(200);
  const tx = (invoice.body as { transaction: Json }).transaction;
  invoiceCid = createdEventOf(tx, ':Invoice:Invoice').contractId as string;
  const acceptor = await call(sb, 'POST', '/v2/commands/submit-and-wait-for-transaction', {
    commands: keylessCommands(sb, {}, 'Bob', 'bob-bot'),
  });
  expect(acceptor.status, acceptor.text).toBe(200);
  acceptorCid = createdEventOf(
    (acceptor.body as { transaction: Json }).transaction,
    ':Automation:InvoiceAcceptor',
  ).contractId as string;
  // A non-consuming template choice: an ExercisedEvent with no interface.
  const remind = await call(sb, 'POST', '/v2/commands/submit-and-wait', {
    commands: [
      {
        ExerciseCommand: {
          templateId: `${PKG}:Invoice:Invoice`,
          contractId: invoiceCid,
          choice: 'Remind',
          choiceArgument: { note: 'soon' },
        },
      },
    ],
    commandId: nextCommandId('remind'),
    actAs: [sb.parties.Alice],
    userId: 'alice-bot',
  });
  expect(remind.status, remind.text).toBe(200);
});

afterAll(async () => {
  await sb.stop();
});

describe('absent optionals are null on the wire', () => {
  it('JsTransaction traceContext, externalTransactionHash, paidTrafficCost; contractKey; interfaceId', async () => {
    const frames = await rawFrames('/v2/updates', {
      beginExclusive: 0,
      endInclusive: await ledgerEnd(),
      updateFormat: {
        includeTransactions: {
          eventFormat: wildcard(sb.parties.Alice!),
          transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS',
        },
      },
    });
    expect(frames.length).toBeGreaterThanOrEqual(2);
    let exercised: Json | undefined;
    let keyed: Json | undefined;
    for (const text of frames) {
      const frame = JSON.parse(text) as { update: { Transaction: { value: Json } } };
      asyncapi.assert('Either_JsCantonError_JsGetUpdatesResponse', frame);
      const tx = frame.update.Transaction.value;
      expect(tx).toHaveProperty('traceContext', null);
      expect(tx).toHaveProperty('externalTransactionHash', null);
      expect(tx).toHaveProperty('paidTrafficCost', null);
      // Unset strings stay "" (the Remind was Alice's own, so its commandId shows).
      expect(tx.workflowId).toBe('');
      for (const e of tx.events as Json[]) {
        if (e.ExercisedEvent !== undefined) exercised = e.ExercisedEvent as Json;
        const c = e.CreatedEvent as Json | undefined;
        if (c?.contractId === invoiceCid) keyed = c;
      }
    }
    expect(exercised).toHaveProperty('interfaceId', null);
    expect(exercised?.choice).toBe('Remind');
    expect(keyed?.contractKey).toEqual({ issuer: sb.parties.Alice, reference: 'INV-NULL-1' });
    // In Canton's field order (canton-samples.ts, from its codecs): the key and the interface
    // right after the template id.
    expect(Object.keys(exercised!)).toEqual(Object.keys(cantonExercised));
    expect(Object.keys(keyed!)).toEqual(Object.keys(cantonCreated));
    expect(frames.join('\n')).toContain('"interfaceId":null');
  });

  it('CreatedEvent.contractKey of a keyless template, in the ACS and in events-by-contract-id', async () => {
    const format = { eventFormat: wildcard(sb.parties.Bob!) };
    const acs = await rawFrames('/v2/state/active-contracts', {
      activeAtOffset: await ledgerEnd(),
      ...format,
    });
    const acceptor = acs
      .map((t) => JSON.parse(t) as { contractEntry: { JsActiveContract: { createdEvent: Json } } })
      .find((f) => f.contractEntry.JsActiveContract.createdEvent.contractId === acceptorCid);
    expect(acceptor?.contractEntry.JsActiveContract.createdEvent).toHaveProperty(
      'contractKey',
      null,
    );
    expect(Object.keys(acceptor!.contractEntry.JsActiveContract.createdEvent)).toEqual(
      Object.keys(cantonCreated),
    );
    const events = await raw('POST', '/v2/events/events-by-contract-id', {
      contractId: acceptorCid,
      ...format,
    });
    expect(events.status, events.text).toBe(200);
    // An active contract: {"created": {...}, "archived": null}.
    expect(events.text).toContain('"archived":null');
    const body = JSON.parse(events.text) as { created: { createdEvent: Json }; archived: unknown };
    expect(Object.keys(body)).toEqual(['created', 'archived']);
    expect(body.archived).toBeNull();
    expect(body.created.createdEvent).toHaveProperty('contractKey', null);
    openapi.assert('JsGetEventsByContractIdResponse', body);
  });

  it('the last active-contracts page has "nextPageToken": null', async () => {
    const r = await raw('POST', '/v2/state/active-contracts-page', {
      eventFormat: wildcard(sb.parties.Bob!),
      maxPageSize: 100,
    });
    expect(r.status, r.text).toBe(200);
    expect(r.text).toContain('"nextPageToken":null');
    openapi.assert('JsGetActiveContractsPageResponse', JSON.parse(r.text));
  });

  it('Completion.traceContext is null; a rejected completion keeps updateId ""', async () => {
    const cmd = keylessCommands(sb);
    expect((await call(sb, 'POST', '/v2/commands/submit-and-wait', cmd)).status).toBe(200);
    await call(sb, 'POST', '/sandbox/faults', {
      completionErrors: [{ code: 'LOCAL_VERDICT_LOCKED_CONTRACTS', rate: 1 }],
    });
    const rejected = keylessCommands(sb);
    expect((await call(sb, 'POST', '/v2/commands/async/submit', rejected)).status).toBe(200);
    await call(sb, 'DELETE', '/sandbox/faults');
    const request = { userId: 'alice-bot', parties: [sb.parties.Alice], beginExclusive: 0 };
    const all = (await call(sb, 'POST', '/v2/commands/completions', request)).body as unknown[];
    const frames = await firstFrames('/v2/commands/completions', request, all.length);
    const completions = frames
      .map((t) => JSON.parse(t) as { completionResponse: { Completion?: { value: Json } } })
      .map((f) => f.completionResponse.Completion?.value)
      .filter((c): c is Json => c !== undefined);
    for (const c of completions) expect(c).toHaveProperty('traceContext', null);
    const ok = completions.find((c) => c.commandId === cmd.commandId);
    const bad = completions.find((c) => c.commandId === rejected.commandId);
    expect(ok?.updateId).not.toBe('');
    expect(bad?.updateId).toBe('');
    for (const t of frames)
      asyncapi.assert('Either_JsCantonError_CompletionStreamResponse', JSON.parse(t));
  });
});

describe('JsCantonError optionals', () => {
  it('an error of the gRPC services: correlationId, retryInfo and definiteAnswer null', async () => {
    const r = await raw('POST', '/v2/updates/update-by-id', {
      updateId: 'nope',
      updateFormat: {
        includeTransactions: {
          eventFormat: wildcard(sb.parties.Alice!),
          transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA',
        },
      },
    });
    expect(r.status).toBe(404);
    const body = JSON.parse(r.text) as Json;
    expect(body).toMatchObject({
      code: 'UPDATE_NOT_FOUND',
      errorCategory: 11,
      grpcCodeValue: 5,
      correlationId: null,
      retryInfo: null,
      definiteAnswer: null,
    });
    expect(body.traceId).toMatch(/^[0-9a-f]{32}$/);
    openapi.assert('JsCantonError', body);
  });

  it('a retryable submission error: correlationId is the submission id, retryInfo set', async () => {
    await call(sb, 'POST', '/sandbox/faults', {
      submitErrors: [{ code: 'SEQUENCER_BACKPRESSURE', rate: 1 }],
    });
    const r = await raw(
      'POST',
      '/v2/commands/async/submit',
      keylessCommands(sb, { submissionId: 'sub-1' }),
    );
    await call(sb, 'DELETE', '/sandbox/faults');
    const body = JSON.parse(r.text) as Json;
    expect(body).toMatchObject({
      code: 'SEQUENCER_BACKPRESSURE',
      correlationId: 'sub-1',
      retryInfo: '1 second',
      definiteAnswer: null,
    });
    openapi.assert('JsCantonError', body);
  });

  it('an error of the JSON layer itself sets definiteAnswer', async () => {
    const r = await raw('POST', '/v2/dars', {});
    const body = JSON.parse(r.text) as Json;
    expect(body).toHaveProperty('definiteAnswer', false);
    expect(body).toHaveProperty('correlationId', null);
    openapi.assert('JsCantonError', body);
  });
});
