import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { specValidator } from '../../support/spec-validator.js';
import { call, keylessCommands, startTestSandbox, wildcard, wsCollect } from './sandbox-fixture.js';

type Frame = {
  completionResponse?: { Completion?: { value: { status: { code: number } } } };
  update?: object;
};

const openapi = specValidator('openapi-3.5');
let sb: Sandbox | undefined;

afterEach(async () => {
  await sb?.stop();
  sb = undefined;
});

async function ledgerEnd(s: Sandbox): Promise<number> {
  return ((await call(s, 'GET', '/v2/state/ledger-end')).body as { offset: number }).offset;
}

async function completions(s: Sandbox): Promise<{ code: number }[]> {
  const r = await call(s, 'POST', '/v2/commands/completions', {
    userId: 'alice-bot',
    parties: [s.parties.Alice],
    beginExclusive: 0,
  });
  return (r.body as Frame[]).flatMap((f) =>
    f.completionResponse?.Completion === undefined
      ? []
      : [{ code: f.completionResponse.Completion.value.status.code }],
  );
}

describe('fault injection control', () => {
  it('sets, shows, merges and clears faults; rejects unknown ones', async () => {
    sb = await startTestSandbox();
    expect((await call(sb, 'GET', '/sandbox/faults')).body).toEqual({});
    await call(sb, 'POST', '/sandbox/faults', { dropCompletionRate: 0.5 });
    const r = await call(sb, 'POST', '/sandbox/faults', {
      submitErrors: [{ code: 'SEQUENCER_BACKPRESSURE', rate: 0.1 }],
    });
    expect(r.body).toEqual({
      dropCompletionRate: 0.5,
      submitErrors: [{ code: 'SEQUENCER_BACKPRESSURE', rate: 0.1 }],
    });
    expect((await call(sb, 'GET', '/sandbox/faults')).body).toEqual(r.body);
    const bad = await call(sb, 'POST', '/sandbox/faults', { dropCompletionRat: 1 });
    expect(bad.status).toBe(400);
    openapi.assert('JsCantonError', bad.body);
    expect(
      (await call(sb, 'POST', '/sandbox/faults', { submitErrors: [{ code: 'NOPE', rate: 1 }] }))
        .status,
    ).toBe(400);
    expect((await call(sb, 'DELETE', '/sandbox/faults')).status).toBe(200);
    expect((await call(sb, 'GET', '/sandbox/faults')).body).toEqual({});
  });
});

describe('faults', () => {
  it('submitErrors: a synchronous rejection with the code, its category and status', async () => {
    sb = await startTestSandbox();
    await call(sb, 'POST', '/sandbox/faults', {
      submitErrors: [{ code: 'SEQUENCER_BACKPRESSURE', rate: 1 }],
    });
    const r = await call(
      sb,
      'POST',
      '/v2/commands/async/submit',
      keylessCommands(sb, { submissionId: 'sub-1' }),
    );
    expect(r.status).toBe(409);
    openapi.assert('JsCantonError', r.body);
    expect(r.body).toMatchObject({
      code: 'SEQUENCER_BACKPRESSURE',
      errorCategory: 2,
      grpcCodeValue: 10,
      retryInfo: '1 second',
      correlationId: 'sub-1',
    });
    await call(sb, 'POST', '/sandbox/faults', {
      submitErrors: [{ code: 'ABORTED_DUE_TO_SHUTDOWN', rate: 1 }],
    });
    const down = await call(sb, 'POST', '/v2/commands/async/submit', keylessCommands(sb));
    expect(down.status).toBe(503);
    expect(await ledgerEnd(sb)).toBe(0);
  });

  it('completionErrors: an asynchronous rejection, nothing committed', async () => {
    sb = await startTestSandbox();
    await call(sb, 'POST', '/sandbox/faults', {
      completionErrors: [{ code: 'LOCAL_VERDICT_LOCKED_CONTRACTS', rate: 1 }],
    });
    expect((await call(sb, 'POST', '/v2/commands/async/submit', keylessCommands(sb))).status).toBe(
      200,
    );
    expect(await completions(sb)).toEqual([{ code: 10 }]);
    const acs = await call(sb, 'POST', '/v2/state/active-contracts', {
      activeAtOffset: await ledgerEnd(sb),
      eventFormat: wildcard(sb.parties.Alice!),
    });
    expect(acs.body).toEqual([]);
    const w = await call(sb, 'POST', '/v2/commands/submit-and-wait', keylessCommands(sb));
    expect(w.status).toBe(409);
    expect((w.body as { code: string }).code).toBe('LOCAL_VERDICT_LOCKED_CONTRACTS');
  });

  it('loseSubmitResponseRate: the command lands, the connection dies before the response', async () => {
    sb = await startTestSandbox();
    await call(sb, 'POST', '/sandbox/faults', { loseSubmitResponseRate: 1 });
    await expect(
      call(sb, 'POST', '/v2/commands/async/submit', keylessCommands(sb)),
    ).rejects.toThrow();
    await call(sb, 'DELETE', '/sandbox/faults');
    expect(await ledgerEnd(sb)).toBe(1);
    expect(await completions(sb)).toEqual([{ code: 0 }]);
  });

  it('dropCompletionRate: the transaction commits; its completion never reaches the open streams, but a later read finds it', async () => {
    sb = await startTestSandbox();
    const s = sb;
    // A completions stream open before the submission: what a client following them sees live.
    const live: unknown[] = [];
    const ws = new WebSocket(s.url.replace('http', 'ws') + '/v2/commands/completions', [
      'daml.ws.auth',
    ]);
    await new Promise<void>((resolve, reject) => {
      ws.on('open', () => {
        ws.send(
          JSON.stringify({ userId: 'alice-bot', parties: [s.parties.Alice], beginExclusive: 0 }),
        );
        resolve();
      });
      ws.on('error', reject);
    });
    ws.on('message', (data: Buffer) => live.push(JSON.parse(data.toString('utf8'))));
    await call(s, 'POST', '/sandbox/faults', { dropCompletionRate: 1 });
    expect((await call(s, 'POST', '/v2/commands/async/submit', keylessCommands(s))).status).toBe(
      200,
    );
    const end = await ledgerEnd(s);
    expect(end).toBe(1);
    const updates = await call(s, 'POST', '/v2/updates', {
      beginExclusive: 0,
      endInclusive: end,
      updateFormat: {
        includeTransactions: {
          eventFormat: wildcard(s.parties.Alice!),
          transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA',
        },
      },
    });
    expect(updates.body).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 300));
    ws.close();
    expect(live.filter((f) => (f as Frame).completionResponse?.Completion !== undefined)).toEqual(
      [],
    );
    // The participant's index has it: the list (or a stream from an earlier offset) reads it.
    expect(await completions(s)).toEqual([{ code: 0 }]);
  });

  it('completionDelayMs: the completion comes after the delay', async () => {
    sb = await startTestSandbox();
    await call(sb, 'POST', '/sandbox/faults', { completionDelayMs: [200, 200] });
    const started = Date.now();
    const r = await call(sb, 'POST', '/v2/commands/submit-and-wait', keylessCommands(sb));
    expect(r.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('httpLatencyMs: every API call is slowed down', async () => {
    sb = await startTestSandbox();
    await call(sb, 'POST', '/sandbox/faults', { httpLatencyMs: 150 });
    const started = Date.now();
    await ledgerEnd(sb);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('closeStreamsAfterMessages: streams are dropped (1006) after N frames', async () => {
    sb = await startTestSandbox();
    for (let i = 0; i < 4; i++)
      await call(sb, 'POST', '/v2/commands/submit-and-wait', keylessCommands(sb));
    await call(sb, 'POST', '/sandbox/faults', { closeStreamsAfterMessages: 2 });
    const r = await wsCollect(sb, '/v2/commands/completions', {
      userId: 'alice-bot',
      parties: [sb.parties.Alice],
      beginExclusive: 0,
    });
    expect(r.frames).toHaveLength(2);
    expect(r.closeCode).toBe(1006);
  });

  it('closeStreamsEveryMs: open streams are dropped periodically', async () => {
    sb = await startTestSandbox();
    await call(sb, 'POST', '/sandbox/faults', { closeStreamsEveryMs: 150 });
    const started = Date.now();
    const r = await wsCollect(sb, '/v2/updates', {
      beginExclusive: 0,
      updateFormat: {
        includeTransactions: {
          eventFormat: wildcard(sb.parties.Alice!),
          transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA',
        },
      },
    });
    expect(r.closeCode).toBe(1006);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('GET /sandbox/fault-stats counts what was injected, and a clear keeps the counts', async () => {
    sb = await startTestSandbox();
    const empty = (await call(sb, 'GET', '/sandbox/fault-stats')).body;
    expect(empty).toEqual({
      submitErrors: {},
      completionErrors: {},
      streamErrors: {},
      lostSubmitResponses: 0,
      droppedCompletions: 0,
      delayedSubmissions: 0,
      delayedRequests: 0,
      droppedStreams: 0,
      refusedStreams: 0,
    });
    await call(sb, 'POST', '/sandbox/faults', {
      submitErrors: [{ code: 'SEQUENCER_BACKPRESSURE', rate: 0.5 }],
      completionErrors: [{ code: 'LOCAL_VERDICT_LOCKED_CONTRACTS', rate: 0.5 }],
    });
    let rejected = 0;
    for (let i = 0; i < 20; i++) {
      const r = await call(sb, 'POST', '/v2/commands/async/submit', keylessCommands(sb));
      if (r.status !== 200) rejected++;
    }
    const accepted = 20 - rejected;
    const failedInCompletion = (await completions(sb)).filter((c) => c.code !== 0).length;
    await call(sb, 'DELETE', '/sandbox/faults');
    await call(sb, 'POST', '/sandbox/faults', { dropCompletionRate: 1 });
    await call(sb, 'POST', '/v2/commands/async/submit', keylessCommands(sb));
    await call(sb, 'POST', '/sandbox/faults', { loseSubmitResponseRate: 1 });
    await expect(
      call(sb, 'POST', '/v2/commands/async/submit', keylessCommands(sb)),
    ).rejects.toThrow();
    await call(sb, 'DELETE', '/sandbox/faults');
    await call(sb, 'POST', '/sandbox/faults', { completionDelayMs: 5 });
    await call(sb, 'POST', '/v2/commands/async/submit', keylessCommands(sb));
    await call(sb, 'DELETE', '/sandbox/faults');
    await call(sb, 'POST', '/sandbox/faults', { closeStreamsAfterMessages: 1 });
    const ws = await wsCollect(sb, '/v2/commands/completions', {
      userId: 'alice-bot',
      parties: [sb.parties.Alice],
      beginExclusive: 0,
    });
    expect(ws.closeCode).toBe(1006);
    await call(sb, 'DELETE', '/sandbox/faults');
    const stats = (await call(sb, 'GET', '/sandbox/fault-stats')).body as Record<string, unknown>;
    expect(rejected).toBeGreaterThan(0);
    expect(failedInCompletion).toBeGreaterThan(0);
    expect(stats).toEqual({
      submitErrors: { SEQUENCER_BACKPRESSURE: rejected },
      completionErrors: { LOCAL_VERDICT_LOCKED_CONTRACTS: failedInCompletion },
      streamErrors: {},
      lostSubmitResponses: 1,
      droppedCompletions: 2,
      delayedSubmissions: 1,
      delayedRequests: 0,
      droppedStreams: 1,
      refusedStreams: 0,
    });
    expect(accepted).toBeGreaterThanOrEqual(failedInCompletion);
  });

  it('fault-stats counts the streams closeStreamsEveryMs dropped', async () => {
    sb = await startTestSandbox();
    await call(sb, 'POST', '/sandbox/faults', { closeStreamsEveryMs: 100 });
    const r = await wsCollect(sb, '/v2/commands/completions', {
      userId: 'alice-bot',
      parties: [sb.parties.Alice],
      beginExclusive: 0,
    });
    expect(r.closeCode).toBe(1006);
    const stats = (await call(sb, 'GET', '/sandbox/fault-stats')).body as {
      droppedStreams: number;
    };
    expect(stats.droppedStreams).toBe(1);
  });

  it('is deterministic for a seed', async () => {
    const outcomes: number[][] = [];
    for (let run = 0; run < 2; run++) {
      sb = await startTestSandbox({ seed: 7 });
      await call(sb, 'POST', '/sandbox/faults', {
        submitErrors: [{ code: 'SEQUENCER_BACKPRESSURE', rate: 0.5 }],
      });
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++)
        statuses.push(
          (await call(sb, 'POST', '/v2/commands/async/submit', keylessCommands(sb))).status,
        );
      outcomes.push(statuses);
      await sb.stop();
      sb = undefined;
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    expect(new Set(outcomes[0])).toEqual(new Set([200, 409]));
  });
});

describe('prune', () => {
  it('prunes, reports the offset, and rejects reads below it', async () => {
    sb = await startTestSandbox();
    for (let i = 0; i < 3; i++)
      await call(sb, 'POST', '/v2/commands/submit-and-wait', keylessCommands(sb));
    expect((await call(sb, 'POST', '/sandbox/prune', { offset: 2 })).status).toBe(200);
    expect((await call(sb, 'GET', '/v2/state/latest-pruned-offsets')).body).toEqual({
      participantPrunedUpToInclusive: 2,
      allDivulgedContractsPrunedUpToInclusive: 2,
    });
    const format = {
      includeTransactions: {
        eventFormat: wildcard(sb.parties.Alice!),
        transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA',
      },
    };
    const below = await call(sb, 'POST', '/v2/updates', {
      beginExclusive: 1,
      endInclusive: 3,
      updateFormat: format,
    });
    expect(below.status).toBe(400);
    expect(below.body).toMatchObject({
      code: 'PARTICIPANT_PRUNED_DATA_ACCESSED',
      errorCategory: 9,
    });
    const ok = await call(sb, 'POST', '/v2/updates', {
      beginExclusive: 2,
      endInclusive: 3,
      updateFormat: format,
    });
    expect(ok.body).toHaveLength(1);
    const ws = await wsCollect(sb, '/v2/updates', { beginExclusive: 0, updateFormat: format });
    expect(ws.frames).toEqual([
      expect.objectContaining({ code: 'PARTICIPANT_PRUNED_DATA_ACCESSED' }),
    ]);
    expect((await call(sb, 'POST', '/sandbox/prune', { offset: 99 })).status).toBe(400);
  });
});
