import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/core/logger.js';
import { LedgerApiError } from '../../../src/ledger/ledger-api-error.js';
import { decodeCompletion, streamCompletions } from '../../../src/ledger/ws/completion-stream.js';
import { FakeWsServer } from '../../support/fake-ws-server.js';
import { specValidator } from '../../support/spec-validator.js';
import {
  ALICE,
  PRUNED_ERROR,
  SHUTDOWN_ERROR,
  completionCheckpointFrame,
  completionFrame,
} from './ws-fixtures.js';
import { waitFor } from '../../support/wait-for.js';
import { drain, sendValid, testContext } from './ws-test-helpers.js';

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

function assertRequest(msg: unknown): void {
  specValidator('asyncapi-3.5').assert('CompletionStreamRequest', msg);
  specValidator('asyncapi-3.4').assert('CompletionStreamRequest', msg);
}

describe('streamCompletions', () => {
  it('decodes completions and checkpoints and resumes from the last of them', async () => {
    const s = streamCompletions(
      testContext(server.url),
      { userId: 'alice-bot', parties: [ALICE], beginExclusive: 40 },
      { signal: stop.signal },
    );
    const { got } = drain(s);
    const first = await server.nextConnection();
    expect(first.handshake.path).toBe('/v2/commands/completions');
    const request = await first.request();
    assertRequest(request);
    expect(request).toEqual({ userId: 'alice-bot', parties: [ALICE], beginExclusive: 40 });
    await sendValid(first, 'CompletionStreamResponse', completionFrame(41, 'lb-accept-1'));
    await sendValid(first, 'CompletionStreamResponse', completionCheckpointFrame(45));
    await waitFor(
      () => got.length,
      (n) => n === 2,
      2_000,
      'got: 2',
    );
    expect(got[0]).toMatchObject({ kind: 'completion', offset: 41 });
    expect(got[0]?.kind === 'completion' && got[0].completion.commandId).toBe('lb-accept-1');
    expect(got[0]?.kind === 'completion' && got[0].completion.status?.code).toBe(0);
    expect(got[1]).toMatchObject({ kind: 'checkpoint', offset: 45 });

    first.drop();
    const second = await server.nextConnection();
    expect(await second.request()).toEqual({
      userId: 'alice-bot',
      parties: [ALICE],
      beginExclusive: 45,
    });
    // An idle close by the server: the stream is open-ended, so it comes back.
    second.close(1000);
    const third = await server.nextConnection();
    const resumed = await third.request();
    assertRequest(resumed);
    expect(resumed).toMatchObject({ beginExclusive: 45 });
    expect(s.lastOffset).toBe(45);
  });

  it('omits userId when the token names the user', async () => {
    const { ended } = drain(
      streamCompletions(
        testContext(server.url),
        { parties: [ALICE], beginExclusive: 0 },
        { signal: stop.signal },
      ),
    );
    const conn = await server.nextConnection();
    const request = await conn.request();
    assertRequest(request);
    expect(request).toEqual({ parties: [ALICE], beginExclusive: 0 });
    await sendValid(conn, 'JsCantonError', PRUNED_ERROR);
    expect((await ended).error).toBeInstanceOf(LedgerApiError);
  });

  it('resumes after a retryable error frame and throws a final one', async () => {
    const { got, ended } = drain(
      streamCompletions(
        testContext(server.url),
        { userId: 'alice-bot', parties: [ALICE], beginExclusive: 40 },
        { signal: stop.signal },
      ),
    );
    const first = await server.nextConnection();
    await sendValid(first, 'CompletionStreamResponse', completionFrame(42));
    await sendValid(first, 'JsCantonError', SHUTDOWN_ERROR);
    const second = await server.nextConnection();
    expect(await second.request()).toMatchObject({ beginExclusive: 42 });
    await sendValid(second, 'JsCantonError', PRUNED_ERROR);
    const { error } = await ended;
    expect((error as LedgerApiError).error.code).toBe('PARTICIPANT_PRUNED_DATA_ACCESSED');
    expect(got.map((e) => e.offset)).toEqual([42]);
  });
});

describe('decodeCompletion', () => {
  it('skips Empty responses', () => {
    const empty = { completionResponse: { Empty: {} } };
    specValidator('asyncapi-3.5').assert('CompletionStreamResponse', empty);
    expect(decodeCompletion(empty, silentLogger)).toBeUndefined();
  });
});
