import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerClient } from '../../../src/ledger/ledger-client.js';
import type { JsCommands } from '../../../src/ledger/wire/wire-types.js';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { call, keylessCommands, startTestSandbox, wildcard } from './sandbox-fixture.js';

let sb: Sandbox;
let client: LedgerClient;

beforeAll(async () => {
  sb = await startTestSandbox();
  client = await LedgerClient.create({ url: sb.url });
});

afterAll(async () => {
  await client.close();
  await sb.stop();
});

describe("the project's LedgerClient against the sandbox", () => {
  it('submits, reads back and lists', async () => {
    const before = await client.ledgerEnd();
    const r = await client.submitAndWait(keylessCommands(sb) as JsCommands);
    expect(r.completionOffset).toBe(before + 1);
    expect(await client.participantId()).toBe(sb.participantId);
    expect((await client.version()).version).toMatch(/^3\.5/);
    const acs = [];
    for await (const c of client.activeContracts({
      activeAtOffset: r.completionOffset,
      eventFormat: wildcard(sb.parties.Alice!),
    })) {
      acs.push(c);
    }
    expect(acs.length).toBeGreaterThan(0);
  });

  it('resumes the completion stream across injected stream drops without losing or repeating', async () => {
    const begin = await client.ledgerEnd();
    await call(sb, 'POST', '/sandbox/faults', { closeStreamsAfterMessages: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const cmd = keylessCommands(sb);
      ids.push(cmd.commandId as string);
      await client.submit(cmd as JsCommands);
    }
    const stream = client.completions(
      { userId: 'alice-bot', parties: [sb.parties.Alice!], beginExclusive: begin },
      { backoff: { initialMs: 1, maxMs: 5 } },
    );
    const seen: string[] = [];
    const deadline = Date.now() + 10_000;
    for await (const e of stream) {
      if (e.kind === 'completion') seen.push(e.completion.commandId);
      if (seen.length >= ids.length || Date.now() > deadline) break;
    }
    await call(sb, 'DELETE', '/sandbox/faults');
    expect(seen).toEqual(ids);
    expect(stream.reconnects).toBeGreaterThan(0);
  });
});
