import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/cli/compose/read-config.js';
import { rootLogger } from '../../src/cli/compose/root-logger.js';
import { startBot } from '../../src/cli/compose/start-bot.js';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import { eventFormat } from '../../src/ledger/filters.js';
import { runUntil } from '../support/run-until.js';
import { withScope } from '../support/test-scope.js';
import { INVOICE, INVOICES_MODEL, PAYMENT, RULES_DIR } from './harness.js';

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
  it(
    'the second run starts on the new ledger and its rules fire',
    () =>
      withScope(async (outer) => {
        const dir = outer.tempDir('ledgerbot-embedded-restart-');
        const configFile = join(dir, 'bot.config.yaml');
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

        // One run: start the bot (and its sandbox), issue the invoices, wait until the rule accepted
        // each one (a Payment each: the bot read the new ledger), stop; returns its checkpoint.
        const runOnce = (invoices: number): Promise<number> =>
          runUntil({
            start: async (scope) => {
              const running = scope.own(await startBot(config, logger));
              const sandbox = running.sandbox!;
              const client = scope.own(await LedgerClient.create({ url: sandbox.url }));
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
              return { running, client, issuer: sandbox.parties.issuer! };
            },
            probe: ({ client, issuer }) => payments(client, issuer),
            until: (n) => n === invoices,
            what: `${invoices} accepted invoice(s)`,
            timeoutMs: 20_000,
            then: ({ running }) => running.bot.checkpoint() ?? 0,
          });

        const first = await runOnce(4);
        const second = await runOnce(1);
        // The first run's checkpoint was past anything the second ledger reached before its bot began.
        expect(first).toBeGreaterThan(0);
        expect(second).toBeGreaterThan(0);
      }),
    60_000,
  );
});
