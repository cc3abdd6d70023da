import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { expect, it } from 'vitest';
import { FLEET_PG_MIGRATIONS } from '../../src/store/pg/fleet-pg-migrations.js';
import { runPgMigrations } from '../../src/store/pg/run-pg-migrations.js';
import { cli } from '../support/cli-capture.js';
import { describeWithPg } from '../support/describe-with-pg.js';
import { withScope, type TestScope } from '../support/test-scope.js';
import { ROOT } from '../integration/harness.js';

// `run` with `fleet:`: the mistakes a user can make exit 2, before any participant is reached.

function writeConfig(scope: TestScope, lines: string[]): string {
  const dir = scope.tempDir('ledgerbot-run-fleet-');
  cpSync(join(ROOT, 'examples/invoices/rules'), join(dir, 'rules'), { recursive: true });
  const config = join(dir, 'bot.config.yaml');
  writeFileSync(
    config,
    [
      'ledger:',
      // Nobody listens there: the refusals below come before the participant is asked.
      '  url: http://127.0.0.1:1',
      '  userId: ledgerbot',
      'parties: { issuer: "issuer::1220aa", payer: "payer::1220bb" }',
      'rules: rules/',
      'log: { level: silent }',
      ...lines,
      '',
    ].join('\n'),
  );
  return config;
}

it('run with fleet but no state.postgres exits 2 naming the field', () =>
  withScope(async (scope) => {
    const config = writeConfig(scope, ['fleet: { name: invoices }']);
    const r = await cli(['run', '--config', config]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${config}:7:1`);
    expect(r.err).toContain('`fleet` needs `state.postgres`');
  }));

describeWithPg('run with fleet on PostgreSQL', (server) => {
  it("exits 2 when another fleet's live member uses the schema", () =>
    withScope(async (scope) => {
      const url = await server().freshDatabase();
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      scope.defer(db, () => db.end());
      await runPgMigrations(db, 'shared', [FLEET_PG_MIGRATIONS]);
      await db.query(
        `INSERT INTO shared.lb_fleet_members (instance_id, name, rules_hash, rule_ids)
           VALUES ('host-1-abc', 'payments', 'h', '{}')`,
      );
      const config = writeConfig(scope, [
        `state: { postgres: { url: '${url}', schema: shared } }`,
        'fleet: { name: invoices, leasePeriod: 10s }',
      ]);
      const r = await cli(['run', '--config', config]);
      expect(r.code).toBe(2);
      expect(r.err).toContain(
        'schema shared is used by fleet "payments" (member host-1-abc), not "invoices"',
      );
    }));
});
