import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventFormat } from '../../src/ledger/filters.js';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import type { Command, CreatedEvent } from '../../src/ledger/wire/wire-types.js';
import { cli } from '../support/cli-capture.js';
import { freePort } from '../support/free-port.js';
import { withScope } from '../support/test-scope.js';
import { waitFor } from '../support/wait-for.js';
import { spawnBot } from './child-bot.js';
import { ROOT } from './harness.js';

// examples/token-transfers run as a user runs it: `ledgerbot run` (a child process, from the
// sources) with the example's embedded sandbox, models and rules, and `ledgerbot run-slot`,
// which asks the running bot (over its ops API) to run the daily merge now. The config is the
// example's, with a free port and a state directory of the test's own.

const EXAMPLE = join(ROOT, 'examples/token-transfers');
const OFFER = '#token-example:Token.Transfer:TransferOffer';
const HOLDING = '#token-example:Token.Holding:TokenHolding';

type Parties = Record<'registry' | 'treasury' | 'alice' | 'mallory', string>;
type Args = Record<string, unknown>;
const argsOf = (c: CreatedEvent): Args => c.createArgument as Args;

/** A copy of the example's config: its models and rules, the test's port and state directory. */
function writeExample(dir: string, port: number): string {
  const config = readFileSync(join(EXAMPLE, 'bot.config.yaml'), 'utf8')
    .replaceAll('- models/', `- ${EXAMPLE}/models/`)
    .replace('rules: rules/', `rules: ${EXAMPLE}/rules/`)
    .replace('tests: tests/', `tests: ${EXAMPLE}/tests/`)
    .replace('${LEDGERBOT_STATE_DIR:-.state}', join(dir, 'state'))
    .replace('${LEDGERBOT_HTTP_PORT:-9465}', String(port))
    .replace('pretty: true', 'pretty: false');
  expect(config.split(`${EXAMPLE}/`)).toHaveLength(6);
  expect(config).toContain(`port: ${port}`);
  const path = join(dir, 'bot.config.yaml');
  writeFileSync(path, config);
  return path;
}

async function activeOf(
  client: LedgerClient,
  party: string,
  template: string,
): Promise<CreatedEvent[]> {
  const out: CreatedEvent[] = [];
  for await (const element of client.activeContracts({
    activeAtOffset: await client.ledgerEnd(),
    eventFormat: eventFormat({ parties: [party], templates: [template] }),
  })) {
    const entry = element.contractEntry;
    if (entry !== undefined && 'JsActiveContract' in entry) {
      out.push(entry.JsActiveContract.createdEvent);
    }
  }
  return out;
}

const amountsOf = (cs: readonly CreatedEvent[], owner: string): number[] =>
  cs
    .filter((c) => argsOf(c).owner === owner)
    .map((c) => Number(argsOf(c).amount))
    .sort((a, b) => a - b);

describe('examples/token-transfers with ledgerbot run', () => {
  it(
    'accepts allow-listed small transfers, leaves the others, and merges small holdings in a slot',
    () =>
      withScope(async (scope) => {
        const dir = scope.tempDir('ledgerbot-token-transfers-');
        const config = writeExample(dir, await freePort());
        const bot = spawnBot(config, { fromSources: true });
        scope.defer(bot, () => bot.kill('SIGKILL'));
        const ready = await bot.waitForLine(
          (l) => l.msg === 'embedded sandbox ready',
          60_000,
          'the embedded sandbox',
        );
        const parties = ready.parties as Parties;
        const client = scope.own(await LedgerClient.create({ url: String(ready.url) }));
        await bot.waitForLine(
          (l) => l.msg === 'bot state changed' && l.state === 'running',
          60_000,
          'the bot running',
        );

        let n = 0;
        const submit = (actAs: string[], commands: Command[]) =>
          client.submitAndWait({
            commands,
            commandId: `driver-${n++}`,
            userId: 'ledgerbot',
            actAs,
          });
        // The registry and the sender sign an offer (Splice's TransferFactory does this).
        const offer = (sender: string, amount: string): Command => ({
          CreateCommand: {
            templateId: OFFER,
            createArguments: {
              admin: parties.registry,
              sender,
              receiver: parties.treasury,
              id: 'EXT',
              amount,
              requestedAt: '2026-01-01T00:00:00Z',
              executeBefore: '2099-01-01T00:00:00Z',
              inputHoldingCids: [],
              meta: {},
            },
          },
        });
        const holding = (owner: string, amount: string): Command => ({
          CreateCommand: {
            templateId: HOLDING,
            createArguments: { admin: parties.registry, owner, id: 'EXT', amount, meta: {} },
          },
        });

        // Transfers: an allow-listed small one, a large one, one from a sender not on the list,
        // and a last allow-listed one: once that one is accepted, the bot has read the two before.
        await submit([parties.registry, parties.alice], [offer(parties.alice, '250')]);
        await submit([parties.registry, parties.alice], [offer(parties.alice, '5000')]);
        await submit([parties.registry, parties.mallory], [offer(parties.mallory, '5')]);
        await submit([parties.registry, parties.alice], [offer(parties.alice, '100')]);
        const received = await waitFor(
          () => activeOf(client, parties.treasury, HOLDING),
          (hs) => amountsOf(hs, parties.treasury).length === 2,
          30_000,
          "the treasury's holdings from the two allow-listed transfers",
        );
        expect(amountsOf(received, parties.treasury)).toEqual([100, 250]);
        const left = await activeOf(client, parties.treasury, OFFER);
        expect(left.map((o) => [argsOf(o).sender, Number(argsOf(o).amount)])).toEqual([
          [parties.alice, 5000],
          [parties.mallory, 5],
        ]);

        // Three small holdings of the treasury, a large one, and a small one of alice's: the
        // slot merges the treasury's small ones into one, with one command.
        await submit(
          [parties.registry, parties.treasury, parties.alice],
          [
            holding(parties.treasury, '1.0'),
            holding(parties.treasury, '2.25'),
            holding(parties.treasury, '500'),
            holding(parties.treasury, '3.5'),
            holding(parties.alice, '1.0'),
          ],
        );
        const slot = await cli(['run-slot', '--config', config, '--rule', 'merge-small-holdings']);
        expect(slot.err).toBe('');
        expect(slot.code).toBe(0);
        expect(slot.out).toContain('run by the running bot at');
        expect(slot.out).toContain('outcomes: 1 succeeded');
        expect(slot.out.match(/Merge/g)).toHaveLength(1);
        const after = await activeOf(client, parties.treasury, HOLDING);
        expect(amountsOf(after, parties.treasury)).toEqual([6.75, 100, 250, 500]);
        expect(after.map((h) => argsOf(h).amount)).toContain('6.7500000000');
        const alices = await activeOf(client, parties.alice, HOLDING);
        expect(amountsOf(alices, parties.alice)).toEqual([1]);

        // The running bot ran the slot (run-slot asked it over the ops API): its pipeline
        // recorded and submitted the one Merge.
        const merges = bot.lines.filter(
          (l) =>
            l.msg === 'intent finished' &&
            l.ruleId === 'merge-small-holdings' &&
            l.state === 'succeeded',
        );
        expect(merges).toHaveLength(1);
        expect(bot.lines.filter((l) => typeof l.level === 'number' && l.level >= 50)).toEqual([]);

        bot.child.kill('SIGTERM');
        expect(await bot.exited).toEqual({ code: 0, signal: null });
      }),
    150_000,
  );
});
