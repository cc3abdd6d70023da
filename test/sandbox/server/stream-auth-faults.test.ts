import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { specValidator } from '../../support/spec-validator.js';
import { call, keylessCommands, startTestSandbox, wildcard } from './sandbox-fixture.js';

// When the token behind an open stream expires, Canton ends the stream with
// ACCESS_TOKEN_EXPIRED; when the user's rights change, with STALE_STREAM_AUTHORIZATION. Both are
// category 2 (ABORTED, gRPC 10), not redacted, and arrive as one JsCantonError frame followed by
// a normal close (NOTES.md "Corrections" and §2; [C35] AuthorizationChecksErrors.scala).

const asyncapi = specValidator('asyncapi-3.5');
let sb: Sandbox | undefined;

afterEach(async () => {
  await sb?.stop();
  sb = undefined;
});

type Socket = { frames: Record<string, unknown>[]; closed: Promise<number> };

async function stream(s: Sandbox, path: string, request: unknown): Promise<Socket> {
  const ws = new WebSocket(s.url.replace('http', 'ws') + path, ['daml.ws.auth']);
  const frames: Record<string, unknown>[] = [];
  ws.on('message', (d: Buffer) =>
    frames.push(JSON.parse(d.toString('utf8')) as Record<string, unknown>),
  );
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.send(JSON.stringify(request));
  // The earlier transaction (or completion) arrives: the stream is served.
  while (frames.length === 0) await new Promise((r) => setTimeout(r, 10));
  return { frames, closed };
}

function updates(s: Sandbox): unknown {
  return {
    beginExclusive: 0,
    updateFormat: {
      includeTransactions: {
        eventFormat: wildcard(s.parties.Alice!),
        transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA',
      },
    },
  };
}

function completions(s: Sandbox): unknown {
  return { userId: 'alice-bot', parties: [s.parties.Alice], beginExclusive: 0 };
}

function expectAuthError(frame: Record<string, unknown>, code: string, cause: RegExp): void {
  expect(frame).toMatchObject({
    code,
    errorCategory: 2,
    grpcCodeValue: 10,
    retryInfo: '1 second',
    correlationId: null,
    definiteAnswer: null,
    resources: [],
    context: { category: '2', definite_answer: 'false' },
  });
  expect(frame.cause).toMatch(cause);
}

describe('streamErrors fault', () => {
  it('ACCESS_TOKEN_EXPIRED ends the open update and completion streams: an error frame, then a normal close', async () => {
    sb = await startTestSandbox();
    await call(sb, 'POST', '/v2/commands/submit-and-wait', keylessCommands(sb));
    const u = await stream(sb, '/v2/updates', updates(sb));
    const c = await stream(sb, '/v2/commands/completions', completions(sb));
    const set = await call(sb, 'POST', '/sandbox/faults', {
      streamErrors: [{ code: 'ACCESS_TOKEN_EXPIRED', rate: 1 }],
    });
    expect(set.status, set.text).toBe(200);
    expect(await u.closed).toBe(1000);
    expect(await c.closed).toBe(1000);
    const uLast = u.frames[u.frames.length - 1]!;
    const cLast = c.frames[c.frames.length - 1]!;
    expectAuthError(
      uLast,
      'ACCESS_TOKEN_EXPIRED',
      /^Claims were valid until .*Z, current time is .*Z$/,
    );
    expectAuthError(cLast, 'ACCESS_TOKEN_EXPIRED', /^Claims were valid until/);
    asyncapi.assert('Either_JsCantonError_JsGetUpdatesResponse', uLast);
    asyncapi.assert('Either_JsCantonError_CompletionStreamResponse', cLast);
    const stats = (await call(sb, 'GET', '/sandbox/fault-stats')).body as {
      streamErrors: Record<string, number>;
    };
    expect(stats.streamErrors).toEqual({ ACCESS_TOKEN_EXPIRED: 2 });
  });

  it('STALE_STREAM_AUTHORIZATION, while set, ends a stream at its next frame', async () => {
    sb = await startTestSandbox();
    await call(sb, 'POST', '/v2/commands/submit-and-wait', keylessCommands(sb));
    await call(sb, 'POST', '/sandbox/faults', {
      streamErrors: [{ code: 'STALE_STREAM_AUTHORIZATION', rate: 1 }],
    });
    // Opened after the fault was set: its first frame is the error.
    const r = await stream(sb, '/v2/updates', updates(sb));
    expect(await r.closed).toBe(1000);
    expect(r.frames).toHaveLength(1);
    expectAuthError(
      r.frames[0]!,
      'STALE_STREAM_AUTHORIZATION',
      /^Stale stream authorization\. Retry quickly\.$/,
    );
    // Cleared: a reconnect is served again.
    await call(sb, 'DELETE', '/sandbox/faults');
    const again = await stream(sb, '/v2/updates', updates(sb));
    expect(again.frames[0]).toHaveProperty('update');
    const stats = (await call(sb, 'GET', '/sandbox/fault-stats')).body as {
      streamErrors: Record<string, number>;
    };
    expect(stats.streamErrors).toEqual({ STALE_STREAM_AUTHORIZATION: 1 });
  });

  it('leaves the active contracts stream alone and rejects other codes', async () => {
    sb = await startTestSandbox();
    const bad = await call(sb, 'POST', '/sandbox/faults', {
      streamErrors: [{ code: 'SEQUENCER_BACKPRESSURE', rate: 1 }],
    });
    expect(bad.status).toBe(400);
    expect((bad.body as { cause: string }).cause).toMatch(
      /ACCESS_TOKEN_EXPIRED, STALE_STREAM_AUTHORIZATION/,
    );
    await call(sb, 'POST', '/v2/commands/submit-and-wait', keylessCommands(sb));
    await call(sb, 'POST', '/sandbox/faults', {
      streamErrors: [{ code: 'ACCESS_TOKEN_EXPIRED', rate: 1 }],
    });
    const end = ((await call(sb, 'GET', '/v2/state/ledger-end')).body as { offset: number }).offset;
    const acs = await stream(sb, '/v2/state/active-contracts', {
      activeAtOffset: end,
      eventFormat: wildcard(sb.parties.Alice!),
    });
    expect(await acs.closed).toBe(1000);
    expect(acs.frames[0]).toHaveProperty('contractEntry');
  });
});

describe('unknown websocket channels', () => {
  it("answer the upgrade with pekko's v1 404 body", async () => {
    sb = await startTestSandbox();
    const ws = new WebSocket(sb.url.replace('http', 'ws') + '/v2/nope', ['daml.ws.auth']);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.on('open', () => reject(new Error('upgraded')));
    });
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toEqual({
      errors: [`HttpMethod(GET), uri: ${sb.url}/v2/nope`],
      status: 404,
      ledgerApiError: null,
    });
  });
});
