import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readConfig } from '../../src/cli/compose/read-config.js';
import { rootLogger } from '../../src/cli/compose/root-logger.js';
import { startBot, type RunningBot } from '../../src/cli/compose/start-bot.js';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import { eventFormat } from '../../src/ledger/filters.js';
import {
  INVOICE,
  INVOICES_MODEL,
  PAYMENT,
  RULES_DIR,
  tempDir,
  waitFor,
  type TempDir,
} from './harness.js';

async function payments(client: LedgerClient, party: string): Promise<number> {
  let n = 0;
  for await (const element of client.activeContracts({
    activeAtOffset: await client.ledgerEnd(),
    eventFormat: eventFormat({ parties: [party], templates: [PAYMENT] }),
  })) {
    if (element.contractEntry !== undefined && 'JsActiveContract' in element.contractEntry) n++;
  }
  return n;
}

// An embedded sandbox starts empty on every run while state.dir keeps the last run's checkpoint:
// a second run must begin on the new ledger, not wait forever past its end.
describe('run on an embedded ledger, twice with one state directory', () => {
  let temp: TempDir | undefined;
  let running: RunningBot | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
    temp?.cleanup();
  });

  it('the second run starts on the new ledger and its rules fire', async () => {
    temp = tempDir('ledgerbot-embedded-restart-');
    const configFile = join(temp.dir, 'bot.config.yaml');
    writeFileSync(
      configFile,
      [
        'ledger:',
        `  embedded: { models: ['${INVOICES_MODEL}'], parties: [issuer, payer] }`,
        '  userId: ledgerbot',
        `rules: ['${join(RULES_DIR, 'accept-small-invoices.yaml')}']`,
        'state: { dir: state }',
        'log: { level: silent }',
        '',
      ].join('\n'),
    );
    const config = await readConfig(configFile, {});
    const logger = rootLogger(config.log, { out: () => undefined, err: () => undefined });

    const runOnce = async (invoices: number): Promise<number> => {
      running = await startBot(config, logger);
      const sandbox = running.sandbox!;
      const client = await LedgerClient.create({ url: sandbox.url });
      try {
        for (let i = 0; i < invoices; i++) {
          await client.submitAndWait({
            commands: [
              {
                CreateCommand: {
                  templateId: INVOICE,
                  createArguments: {
                    issuer: sandbox.parties.issuer!,
                    payer: sandbox.parties.payer!,
                    amount: '10.00',
                    currency: 'USD',
                    due: '2030-01-31',
                    reference: `INV-${i}`,
                  },
                },
              },
            ],
            commandId: `driver-${i}`,
            userId: 'driver',
            actAs: [sandbox.parties.issuer!],
          });
        }
        // Every invoice accepted by the rule (a Payment each): the bot read the new ledger.
        await waitFor(
          () => payments(client, sandbox.parties.issuer!),
          (n) => n === invoices,
          20_000,
          `${invoices} accepted invoice(s)`,
        );
        return running.bot.checkpoint() ?? 0;
      } finally {
        await client.close();
        await running.close();
        running = undefined;
      }
    };

    const first = await runOnce(4);
    const second = await runOnce(1);
    // The first run's checkpoint was past anything the second ledger reached before its bot began.
    expect(first).toBeGreaterThan(0);
    expect(second).toBeGreaterThan(0);
  }, 60_000);
});
