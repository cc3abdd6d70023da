import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventFormat } from '../../src/ledger/filters.js';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import { loadRulesOrThrow } from '../../src/rules/load-rules.js';
import { createBot, type Bot } from '../../src/runtime/bot.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/start-sandbox.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import { waitFor } from '../support/wait-for.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/invoices/', import.meta.url));
const RULES_DIR = join(EXAMPLE, 'rules');

let sandbox: Sandbox;
let client: LedgerClient;
let stateDir: string;
let parties: { issuer: string; payer: string };

beforeAll(async () => {
  sandbox = await startSandbox({
    models: [join(EXAMPLE, 'model.yaml')],
    parties: ['Issuer', 'Payer'],
    users: ['ledgerbot:Issuer,Payer'],
    seed: 9,
    limits: { checkpointIntervalMs: 100, listWaitMs: 100 },
  });
  parties = { issuer: sandbox.parties.Issuer!, payer: sandbox.parties.Payer! };
  client = await LedgerClient.create({ url: sandbox.url });
  stateDir = mkdtempSync(join(tmpdir(), 'ledgerbot-runtime-'));
});

afterAll(async () => {
  await client?.close();
  await sandbox?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

function newBot(): Bot {
  const files = readdirSync(RULES_DIR)
    .filter((n) => n.endsWith('.yaml'))
    .map((n) => ({ path: join(RULES_DIR, n), text: readFileSync(join(RULES_DIR, n), 'utf8') }));
  return createBot({
    rules: loadRulesOrThrow(files, { parties }),
    parties,
    userId: 'ledgerbot',
    ledger: client,
    store: openSqliteStore({ dir: stateDir }),
    submission: { maxInFlight: 8, completionTimeoutMs: 5_000 },
    streamBackoff: { initialMs: 50, maxMs: 500 },
    stopGraceMs: 2_000,
  });
}

async function createInvoice(reference: string): Promise<void> {
  await client.submitAndWait({
    commands: [
      {
        CreateCommand: {
          templateId: '#invoices:Invoice:Invoice',
          createArguments: {
            issuer: parties.issuer,
            payer: parties.payer,
            amount: '250.00',
            currency: 'USD',
            due: '2026-03-01',
            reference,
          },
        },
      },
    ],
    commandId: `test-create-${reference}`,
    actAs: [parties.issuer],
    userId: 'ledgerbot',
  });
}

/** Active contracts of a template on the ledger, as the issuer sees them. */
async function count(template: string): Promise<number> {
  const end = await client.ledgerEnd();
  let n = 0;
  for await (const entry of client.activeContracts(
    {
      activeAtOffset: end,
      eventFormat: eventFormat({ parties: [parties.issuer], templates: [template] }),
    },
    { mode: 'list' },
  )) {
    if (entry.contractEntry !== undefined && 'JsActiveContract' in entry.contractEntry) n++;
  }
  return n;
}

describe('the bot against the sandbox (examples/invoices)', () => {
  it('accepts an invoice and settles the payment exactly once, and resumes from its checkpoint', async () => {
    const bot = newBot();
    await bot.start();
    await createInvoice('INV-1');
    await waitFor(
      () => count('#invoices:Payment:Receipt'),
      (n) => n === 1,
      10_000,
      'one receipt',
    );
    await waitFor(
      () => bot.metrics.inFlight,
      (n) => n === 0,
      10_000,
      'no intent in flight',
    );
    expect(await count('#invoices:Invoice:Invoice')).toBe(0);
    expect(await count('#invoices:Payment:Payment')).toBe(0);
    const transitions = bot.metrics.snapshot().intentTransitions;
    expect(transitions.pending).toBe(2); // accept-small-invoices, then settle-accepted-invoices
    expect(transitions.succeeded + transitions.duplicate).toBe(2);
    expect(transitions['dead-lettered']).toBe(0);
    await bot.stop();
    expect(bot.state).toBe('stopped');

    // While the bot is down, another invoice arrives; the restarted bot picks it up from the
    // checkpoint, and replaying what it had seen adds nothing.
    await createInvoice('INV-2');
    const again = newBot();
    await again.start();
    await waitFor(
      () => count('#invoices:Payment:Receipt'),
      (n) => n === 2,
      10_000,
      'two receipts',
    );
    await waitFor(
      () => again.metrics.inFlight,
      (n) => n === 0,
      10_000,
      'no intent in flight',
    );
    // Give a stray duplicate every chance to show up before counting again.
    await new Promise((r) => setTimeout(r, 500));
    expect(await count('#invoices:Payment:Receipt')).toBe(2);
    expect(await count('#invoices:Invoice:Invoice')).toBe(0);
    expect(again.metrics.intentTransitions['dead-lettered']).toBe(0);
    await again.stop();
  }, 30_000);
});
