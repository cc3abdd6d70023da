import { cpSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cli } from '../support/cli-capture.js';
import { withScope } from '../support/test-scope.js';
import { ROOT } from '../integration/harness.js';

// `run` with state.postgres pointing at a server that is not there: a clear error naming the
// database with the password masked, exit code 1 (as for a state directory it cannot open),
// and no SQLite journal made in its place.
it(
  'run with an unreachable PostgreSQL exits 1 with the URL, password masked, and no fallback',
  () =>
    withScope(async (scope) => {
      const dir = scope.tempDir('ledgerbot-pg-unreachable-');
      cpSync(join(ROOT, 'examples/invoices/rules'), join(dir, 'rules'), { recursive: true });
      const config = join(dir, 'bot.config.yaml');
      writeFileSync(
        config,
        [
          'ledger:',
          `  embedded: { models: [${join(ROOT, 'examples/invoices/model.yaml')}], parties: [issuer, payer] }`,
          '  userId: ledgerbot',
          'rules: rules/',
          'state:',
          `  dir: ${join(dir, 'state')}`,
          '  postgres: { url: "${PG_URL_FOR_TEST}", schema: bot }',
          'log: { level: silent }',
          '',
        ].join('\n'),
      );
      process.env.PG_URL_FOR_TEST = 'postgres://bot:hunter2-pw@127.0.0.1:1/ledger';
      try {
        const r = await cli(['run', '--config', config]);
        expect(r.code).toBe(1);
        expect(r.err).toContain(
          'cannot open the PostgreSQL state store at postgres://bot:***@127.0.0.1:1/ledger (schema bot)',
        );
        expect(r.err).toMatch(/ECONNREFUSED/);
        expect(r.err + r.out).not.toContain('hunter2');
        expect(existsSync(join(dir, 'state', 'ledgerbot.sqlite'))).toBe(false);
      } finally {
        delete process.env.PG_URL_FOR_TEST;
      }
    }),
  60_000,
);
