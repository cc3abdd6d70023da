import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/fake-clock.js';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { specValidator } from '../../support/spec-validator.js';
import {
  call,
  createInvoiceCommands,
  keylessCommands,
  PKG,
  startTestSandbox,
  wsCollect,
} from './sandbox-fixture.js';

type ErrorBody = { code: string; context: Record<string, string>; errorCategory: number };
type CompletionFrame = {
  completionResponse: {
    Completion?: {
      value: {
        commandId: string;
        submissionId: string;
        offset: number;
        status: { code: number; message: string; details: { typeUrl: string; value: string }[] };
        deduplicationPeriod: { DeduplicationOffset?: { value: number } };
      };
    };
  };
};

const asyncapi = specValidator('asyncapi-3.5');
let sb: Sandbox | undefined;

afterEach(async () => {
  await sb?.stop();
  sb = undefined;
});

const offsetPeriod = (value: number) => ({ DeduplicationOffset: { value } });
const durationPeriod = (seconds: number) => ({
  DeduplicationDuration: { value: { seconds, nanos: 0 } },
});

async function ledgerEnd(s: Sandbox): Promise<number> {
  return ((await call(s, 'GET', '/v2/state/ledger-end')).body as { offset: number }).offset;
}

describe('command deduplication', () => {
  it('rejects a duplicate in its completion with DUPLICATE_COMMAND and completion_offset', async () => {
    sb = await startTestSandbox();
    const begin = await ledgerEnd(sb);
    const cmd = keylessCommands(sb, { deduplicationPeriod: offsetPeriod(begin) });
    expect(
      (await call(sb, 'POST', '/v2/commands/async/submit', { ...cmd, submissionId: 's1' })).status,
    ).toBe(200);
    expect(
      (await call(sb, 'POST', '/v2/commands/async/submit', { ...cmd, submissionId: 's2' })).status,
    ).toBe(200);
    const { frames } = await wsCollect(
      sb,
      '/v2/commands/completions',
      { userId: 'alice-bot', parties: [sb.parties.Alice], beginExclusive: begin },
      { count: 2 },
    );
    for (const f of frames) asyncapi.assert('Either_JsCantonError_CompletionStreamResponse', f);
    const [first, second] = (frames as CompletionFrame[]).map(
      (f) => f.completionResponse.Completion!.value,
    );
    expect(first!.status.code).toBe(0);
    expect(first!.deduplicationPeriod).toEqual(offsetPeriod(begin));
    expect(second!.submissionId).toBe('s2');
    expect(second!.status.code).toBe(6);
    expect(second!.status.message).toMatch(/^DUPLICATE_COMMAND\(10,s2\): /);
    const info = second!.status.details.find((d) => d.typeUrl.endsWith('google.rpc.ErrorInfo'))!;
    const decoded = Buffer.from(info.value, 'base64').toString('latin1');
    expect(decoded).toContain('DUPLICATE_COMMAND');
    expect(decoded).toContain('completion_offset');
    expect(decoded).toContain(String(first!.offset));
    expect(second!.offset).toBeGreaterThan(first!.offset);
    // The transaction committed once.
    const acs = await call(sb, 'POST', '/v2/state/active-contracts', {
      activeAtOffset: await ledgerEnd(sb),
      filter: { filtersByParty: { [sb.parties.Alice!]: {} } },
    });
    expect((acs.body as unknown[]).length).toBe(1);
  });

  it('submit-and-wait answers a duplicate with 409 DUPLICATE_COMMAND (context completion_offset)', async () => {
    sb = await startTestSandbox();
    const cmd = keylessCommands(sb);
    const ok = await call(sb, 'POST', '/v2/commands/submit-and-wait', cmd);
    const dup = await call(sb, 'POST', '/v2/commands/submit-and-wait', cmd);
    expect(dup.status).toBe(409);
    const body = dup.body as ErrorBody;
    expect(body.code).toBe('DUPLICATE_COMMAND');
    expect(body.errorCategory).toBe(10);
    expect(body.context.completion_offset).toBe(
      String((ok.body as { completionOffset: number }).completionOffset),
    );
    expect(body.context.definite_answer).toBe('true');
  });

  it('the change id is (userId, set(actAs), commandId)', async () => {
    sb = await startTestSandbox({ users: ['alice-bot:Alice', 'alice-two:Alice'] });
    const cmd = keylessCommands(sb);
    expect((await call(sb, 'POST', '/v2/commands/submit-and-wait', cmd)).status).toBe(200);
    const otherUser = { ...cmd, userId: 'alice-two' };
    expect((await call(sb, 'POST', '/v2/commands/submit-and-wait', otherUser)).status).toBe(200);
    const otherCommand = { ...cmd, commandId: `${String(cmd.commandId)}-b` };
    expect((await call(sb, 'POST', '/v2/commands/submit-and-wait', otherCommand)).status).toBe(200);
    expect(
      (
        await call(sb, 'POST', '/v2/commands/submit-and-wait', {
          ...cmd,
          actAs: [sb.parties.Alice, sb.parties.Alice],
        })
      ).status,
    ).toBe(409);
  });

  it('DeduplicationOffset: only acceptances after the offset count', async () => {
    sb = await startTestSandbox();
    const cmd = keylessCommands(sb);
    const ok = await call(sb, 'POST', '/v2/commands/submit-and-wait', cmd);
    const at = (ok.body as { completionOffset: number }).completionOffset;
    const before = await call(sb, 'POST', '/v2/commands/submit-and-wait', {
      ...cmd,
      deduplicationPeriod: offsetPeriod(at - 1),
    });
    expect(before.status).toBe(409);
    const after = await call(sb, 'POST', '/v2/commands/submit-and-wait', {
      ...cmd,
      deduplicationPeriod: offsetPeriod(at),
    });
    expect(after.status).toBe(200);
  });

  it('DeduplicationDuration and the maximum (Empty) follow the clock', async () => {
    const clock = new FakeClock();
    sb = await startTestSandbox({ clock, maxDedup: '1h' });
    const cmd = keylessCommands(sb);
    expect((await call(sb, 'POST', '/v2/commands/submit-and-wait', cmd)).status).toBe(200);
    await clock.advance(30_000);
    expect(
      (
        await call(sb, 'POST', '/v2/commands/submit-and-wait', {
          ...cmd,
          deduplicationPeriod: durationPeriod(60),
        })
      ).status,
    ).toBe(409);
    await clock.advance(31_000);
    const d = await call(sb, 'POST', '/v2/commands/submit-and-wait', {
      ...cmd,
      deduplicationPeriod: durationPeriod(60),
    });
    expect(d.status).toBe(200);
    // Empty = the participant maximum (1h here).
    await clock.advance(59 * 60_000);
    expect(
      (
        await call(sb, 'POST', '/v2/commands/submit-and-wait', {
          ...cmd,
          deduplicationPeriod: { Empty: {} },
        })
      ).status,
    ).toBe(409);
    await clock.advance(2 * 60_000);
    expect((await call(sb, 'POST', '/v2/commands/submit-and-wait', cmd)).status).toBe(200);
  });

  it('a period longer than --max-dedup is not refused synchronously (3.5 does not check it)', async () => {
    sb = await startTestSandbox({ maxDedup: '1h' });
    const cmd = keylessCommands(sb, { deduplicationPeriod: durationPeriod(3601) });
    const r = await call(sb, 'POST', '/v2/commands/submit-and-wait', cmd);
    expect(r.status).toBe(200);
    // It still deduplicates over the whole period asked for.
    const again = await call(sb, 'POST', '/v2/commands/submit-and-wait', cmd);
    expect((again.body as ErrorBody).code).toBe('DUPLICATE_COMMAND');
  });

  it('a negative duration is INVALID_FIELD (category 8), synchronously', async () => {
    sb = await startTestSandbox();
    const r = await call(
      sb,
      'POST',
      '/v2/commands/async/submit',
      keylessCommands(sb, { deduplicationPeriod: durationPeriod(-1) }),
    );
    expect(r.status).toBe(400);
    const body = r.body as ErrorBody;
    expect(body.code).toBe('INVALID_FIELD');
    expect(body.errorCategory).toBe(8);
    expect(await ledgerEnd(sb)).toBe(0);
  });

  it('a period starting before the pruning offset is rejected in the completion (earliest_offset)', async () => {
    sb = await startTestSandbox();
    for (let i = 0; i < 3; i++)
      await call(sb, 'POST', '/v2/commands/submit-and-wait', createInvoiceCommands(sb, `P-${i}`));
    expect((await call(sb, 'POST', '/sandbox/prune', { offset: 2 })).status).toBe(200);
    const r = await call(
      sb,
      'POST',
      '/v2/commands/submit-and-wait',
      createInvoiceCommands(sb, 'D-7', { deduplicationPeriod: offsetPeriod(1) }),
    );
    expect(r.status).toBe(400);
    const body = r.body as ErrorBody;
    expect(body.code).toBe('INVALID_DEDUPLICATION_PERIOD');
    expect(body.context.earliest_offset).toBe('2');
    const list = await call(sb, 'POST', '/v2/commands/completions', {
      userId: 'alice-bot',
      parties: [sb.parties.Alice],
      beginExclusive: 2,
    });
    const codes = (list.body as CompletionFrame[]).flatMap((f) =>
      f.completionResponse.Completion === undefined
        ? []
        : [f.completionResponse.Completion.value.status.code],
    );
    expect(codes).toEqual([0, 9]);
  });

  it('interpretation comes first: resubmitting a consuming exercise that landed is CONTRACT_NOT_FOUND (404), synchronously', async () => {
    sb = await startTestSandbox();
    const created = await call(sb, 'POST', '/v2/commands/submit-and-wait-for-transaction', {
      commands: createInvoiceCommands(sb, 'D-8'),
    });
    const cid = (
      created.body as { transaction: { events: { CreatedEvent: { contractId: string } }[] } }
    ).transaction.events[0]!.CreatedEvent.contractId;
    const cancel = {
      commands: [
        {
          ExerciseCommand: {
            templateId: `${PKG}:Invoice:Invoice`,
            contractId: cid,
            choice: 'Cancel',
            choiceArgument: {},
          },
        },
      ],
      commandId: 'cancel-D-8',
      actAs: [sb.parties.Alice],
      userId: 'alice-bot',
    };
    expect((await call(sb, 'POST', '/v2/commands/submit-and-wait', cancel)).status).toBe(200);
    const end = await ledgerEnd(sb);
    const again = await call(sb, 'POST', '/v2/commands/async/submit', {
      ...cancel,
      submissionId: 'retry',
    });
    expect(again.status).toBe(404);
    const body = again.body as ErrorBody & { resources: [string, string][] };
    expect(body.code).toBe('CONTRACT_NOT_FOUND');
    expect(body.errorCategory).toBe(11);
    expect(body.resources).toEqual([['ErrorResource(CONTRACT_ID)', cid]]);
    // A synchronous failure leaves no completion.
    expect(await ledgerEnd(sb)).toBe(end);
  });

  it('commands that still interpret reach the deduplicator: a non-consuming exercise, a createAndExercise consuming its own contract', async () => {
    sb = await startTestSandbox();
    const created = await call(sb, 'POST', '/v2/commands/submit-and-wait-for-transaction', {
      commands: createInvoiceCommands(sb, 'D-9'),
    });
    const cid = (
      created.body as { transaction: { events: { CreatedEvent: { contractId: string } }[] } }
    ).transaction.events[0]!.CreatedEvent.contractId;
    const remind = {
      commands: [
        {
          ExerciseCommand: {
            templateId: `${PKG}:Invoice:Invoice`,
            contractId: cid,
            choice: 'Remind',
            choiceArgument: {},
          },
        },
      ],
      commandId: 'remind-D-9',
      actAs: [sb.parties.Alice],
      userId: 'alice-bot',
    };
    expect((await call(sb, 'POST', '/v2/commands/submit-and-wait', remind)).status).toBe(200);
    const dupRemind = await call(sb, 'POST', '/v2/commands/submit-and-wait', remind);
    expect(dupRemind.status).toBe(409);
    expect((dupRemind.body as ErrorBody).code).toBe('DUPLICATE_COMMAND');
    const createAndArchive = {
      commands: [
        {
          CreateAndExerciseCommand: {
            templateId: `${PKG}:Automation:InvoiceAcceptor`,
            createArguments: { payer: sb.parties.Alice },
            choice: 'Archive',
            choiceArgument: {},
          },
        },
      ],
      commandId: 'create-and-archive',
      actAs: [sb.parties.Alice],
      userId: 'alice-bot',
    };
    expect((await call(sb, 'POST', '/v2/commands/submit-and-wait', createAndArchive)).status).toBe(
      200,
    );
    const dup = await call(sb, 'POST', '/v2/commands/submit-and-wait', createAndArchive);
    expect(dup.status).toBe(409);
    expect((dup.body as ErrorBody).code).toBe('DUPLICATE_COMMAND');
  });

  it('completion statuses name resources bare (ResourceInfo CONTRACT_ID)', async () => {
    sb = await startTestSandbox();
    await call(sb, 'POST', '/sandbox/faults', { completionDelayMs: [10, 10] });
    const begin = await ledgerEnd(sb);
    const gone = '00' + 'ab'.repeat(33);
    const r = await call(sb, 'POST', '/v2/commands/async/submit', {
      commands: [
        {
          ExerciseCommand: {
            templateId: `${PKG}:Invoice:Invoice`,
            contractId: gone,
            choice: 'Cancel',
            choiceArgument: {},
          },
        },
      ],
      commandId: 'cancel-gone',
      actAs: [sb.parties.Alice],
      userId: 'alice-bot',
    });
    expect(r.status).toBe(200);
    const { frames } = await wsCollect(
      sb,
      '/v2/commands/completions',
      { userId: 'alice-bot', parties: [sb.parties.Alice], beginExclusive: begin },
      { count: 1 },
    );
    const status = (frames as CompletionFrame[])[0]!.completionResponse.Completion!.value.status;
    expect(status.code).toBe(5);
    const info = status.details.find((d) => d.typeUrl.endsWith('google.rpc.ResourceInfo'))!;
    const decoded = Buffer.from(info.value, 'base64').toString('latin1');
    expect(decoded).toContain('CONTRACT_ID');
    expect(decoded).not.toContain('ErrorResource');
    expect(decoded).toContain(gone);
  });

  it('a second submission while the first is in flight gets SUBMISSION_ALREADY_IN_FLIGHT (409) at once', async () => {
    sb = await startTestSandbox();
    await call(sb, 'POST', '/sandbox/faults', { completionDelayMs: [300, 300] });
    const cmd = keylessCommands(sb);
    const first = call(sb, 'POST', '/v2/commands/submit-and-wait', { ...cmd, submissionId: 'a' });
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    const second = await call(sb, 'POST', '/v2/commands/async/submit', {
      ...cmd,
      submissionId: 'b',
    });
    expect(Date.now() - started).toBeLessThan(250);
    expect(second.status).toBe(409);
    const body = second.body as ErrorBody;
    expect(body.code).toBe('SUBMISSION_ALREADY_IN_FLIGHT');
    expect(body.errorCategory).toBe(2);
    expect((await first).status).toBe(200);
    // Once settled, a retry is a duplicate, not in flight.
    const third = await call(sb, 'POST', '/v2/commands/submit-and-wait', {
      ...cmd,
      submissionId: 'c',
    });
    expect((third.body as ErrorBody).code).toBe('DUPLICATE_COMMAND');
  });
});
