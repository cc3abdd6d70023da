import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import { warnUnknownParties } from '../../src/runtime/unknown-parties.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/start-sandbox.js';
import { recordingLogger } from './bot-fixture.js';

const MODEL = fileURLToPath(new URL('../../examples/invoices/model.yaml', import.meta.url));

let sandbox: Sandbox;
let client: LedgerClient;

beforeAll(async () => {
  sandbox = await startSandbox({ models: [MODEL], parties: ['Issuer', 'Payer'], seed: 11 });
  client = await LedgerClient.create({ url: sandbox.url });
});

afterAll(async () => {
  await client?.close();
  await sandbox?.stop();
});

describe('warnUnknownParties', () => {
  it('warns of each configured party id the participant does not know, and of no other', async () => {
    const log = recordingLogger();
    const unknown = await warnUnknownParties(
      client,
      {
        issuer: sandbox.parties.Issuer!,
        payer: sandbox.parties.Payer!,
        typo: `${sandbox.parties.Payer!}x`,
        elsewhere: 'Ghost::1220abcd',
      },
      log,
    );
    expect(unknown).toEqual(['typo', 'elsewhere']);
    const warned = log.lines.filter((l) => l.level === 'warn');
    expect(warned.map((l) => l.fields)).toEqual([
      { alias: 'typo', party: `${sandbox.parties.Payer!}x` },
      { alias: 'elsewhere', party: 'Ghost::1220abcd' },
    ]);
    expect(warned[0]!.msg).toContain('rules that read as it see nothing');
    expect(await warnUnknownParties(client, {}, log)).toEqual([]);
  });

  it('says nothing but a debug line when the participant does not answer the question', async () => {
    const log = recordingLogger();
    const refusing = {
      getParties: () => Promise.reject(new Error('PERMISSION_DENIED: not an admin')),
    };
    expect(await warnUnknownParties(refusing, { payer: 'Payer::1220' }, log)).toBeUndefined();
    expect(log.lines.map((l) => l.level)).toEqual(['debug']);
  });
});
