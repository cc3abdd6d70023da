import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { expect, it } from 'vitest';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import type { Command } from '../../src/ledger/wire/wire-types.js';
import { freePort } from '../support/free-port.js';
import { describeWithPg } from '../support/describe-with-pg.js';
import { withScope } from '../support/test-scope.js';
import { waitFor } from '../support/wait-for.js';
import { spawnBot } from './child-bot.js';
import { ROOT } from './harness.js';

// examples/invoices run as a user runs it, with the journal in PostgreSQL: `ledgerbot run` (a
// child process, from the sources) with the example's embedded sandbox, models and rules, and
// `state.postgres.url: ${LEDGERBOT_PG_URL}`. The URL carries a password (the test server trusts
// every connection, so it is not checked): it must show up in no log line and not in /status.

const EXAMPLE = join(ROOT, 'examples/invoices');
const PASSWORD = 'pw-never-shown-42';

function writeExample(dir: string, port: number): string {
  const config = readFileSync(join(EXAMPLE, 'bot.config.yaml'), 'utf8')
    .replace('models: [model.yaml]', `models: [${EXAMPLE}/model.yaml]`)
    .replace('rules: rules/', `rules: ${EXAMPLE}/rules/`)
    .replace(
      'dir: ${LEDGERBOT_STATE_DIR:-.state}',
      `dir: ${join(dir, 'state')}\n  postgres:\n    url: \${LEDGERBOT_PG_URL}\n    schema: invoices`,
    )
    .replace('pretty: true', 'pretty: false');
  expect(config).toContain('url: ${LEDGERBOT_PG_URL}');
  const path = join(dir, 'bot.config.yaml');
  writeFileSync(path, `${config}\nhttp: { port: ${port} }\n`);
  return path;
}

describeWithPg('examples/invoices with the journal in PostgreSQL', (server) => {
  it(
    'accepts and settles the small invoices, nudges the large overdue one, all journalled in PostgreSQL',
    () =>
      withScope(async (scope) => {
        const url = new URL(await server().freshDatabase());
        url.password = PASSWORD;
        process.env.LEDGERBOT_PG_URL = url.toString();
        scope.defer(url, () => {
          delete process.env.LEDGERBOT_PG_URL;
        });
        const dir = scope.tempDir('ledgerbot-invoices-pg-');
        const port = await freePort();
        const config = writeExample(dir, port);
        const bot = spawnBot(config, { fromSources: true });
        scope.defer(bot, () => bot.kill('SIGKILL'));
        const ready = await bot.waitForLine(
          (l) => l.msg === 'embedded sandbox ready',
          60_000,
          'the embedded sandbox',
        );
        const parties = ready.parties as Record<'issuer' | 'payer', string>;
        const client = scope.own(await LedgerClient.create({ url: String(ready.url) }));
        await bot.waitForLine(
          (l) => l.msg === 'bot state changed' && l.state === 'running',
          60_000,
          'the bot running',
        );
        const invoice = (reference: string, amount: string, due: string): Command => ({
          CreateCommand: {
            templateId: '#invoices:Invoice:Invoice',
            createArguments: {
              issuer: parties.issuer,
              payer: parties.payer,
              amount,
              currency: 'USD',
              due,
              reference,
            },
          },
        });
        await client.submitAndWait({
          commands: [
            invoice('S-1', '100.00', '2099-01-31'),
            invoice('S-2', '250.50', '2099-01-31'),
            invoice('S-3', '999.99', '2099-01-31'),
            invoice('L-1', '5000.00', '2020-01-31'),
          ],
          commandId: 'driver-1',
          userId: 'ledgerbot',
          actAs: [parties.issuer],
        });

        const db = new pg.Client({ connectionString: url.toString() });
        db.on('error', () => undefined);
        await db.connect();
        scope.defer(db, () => db.end());
        const byRule = async (): Promise<Record<string, string[]>> => {
          const { rows } = await db.query<{ rule_id: string; state: string }>(
            'SELECT rule_id, state FROM invoices.lb_intents ORDER BY rule_id, state',
          );
          const out: Record<string, string[]> = {};
          for (const r of rows) (out[r.rule_id] ??= []).push(r.state);
          return out;
        };
        const done = (rules: Record<string, string[]>): boolean =>
          rules['accept-small-invoices']?.filter((s) => s === 'succeeded').length === 3 &&
          rules['settle-accepted-invoices']?.filter((s) => s === 'succeeded').length === 3 &&
          (rules['nudge-large-invoices']?.length ?? 0) >= 1;
        await waitFor(byRule, done, 40_000, 'the example intents journalled as succeeded');
        const rules = await byRule();
        expect(rules['accept-small-invoices']).toEqual(['succeeded', 'succeeded', 'succeeded']);
        expect(rules['settle-accepted-invoices']).toEqual(['succeeded', 'succeeded', 'succeeded']);
        const slots = await db.query<{ rule_id: string }>(
          'SELECT rule_id FROM invoices.lb_schedule_slots',
        );
        expect(slots.rows.map((r) => r.rule_id)).toContain('nudge-large-invoices');
        const cp = await db.query<{ owner: string; resume_offset: string | null }>(
          'SELECT owner, resume_offset FROM invoices.lb_checkpoints',
        );
        expect(cp.rows).toHaveLength(1);
        expect(Number(cp.rows[0]!.resume_offset)).toBeGreaterThan(0);
        // The journal is in PostgreSQL: no SQLite file in the state directory.
        expect(existsSync(join(dir, 'state', 'ledgerbot.sqlite'))).toBe(false);

        const status = await (await fetch(`http://127.0.0.1:${port}/status`)).text();
        expect(status).not.toContain(PASSWORD);
        const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        expect(metrics).not.toContain(PASSWORD);
        await bot.kill('SIGTERM');
        const everything = JSON.stringify(bot.lines) + bot.other.join('\n');
        expect(everything).not.toContain(PASSWORD);
        expect(bot.lines.some((l) => (l.level ?? 0) >= 50)).toBe(false);
      }),
    120_000,
  );
});
