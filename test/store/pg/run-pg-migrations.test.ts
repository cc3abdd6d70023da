import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { JOURNAL_PG_MIGRATIONS } from '../../../src/store/pg/journal-pg-migrations.js';
import type { PgMigrationComponent } from '../../../src/store/pg/pg-migration.js';
import { runPgMigrations } from '../../../src/store/pg/run-pg-migrations.js';
import { describeWithPg } from '../../support/describe-with-pg.js';

const V1_FIXTURE = new URL('./fixtures/journal-v1.sql', import.meta.url);

describeWithPg('PostgreSQL migrations', (server) => {
  const clients: pg.Client[] = [];
  afterAll(async () => {
    for (const c of clients) await c.end().catch(() => undefined);
  });

  async function connect(url: string): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    clients.push(client);
    return client;
  }

  async function versions(client: pg.Client, schema: string): Promise<string[]> {
    const { rows } = await client.query<{ component: string; version: number }>(
      `SELECT component, version FROM "${schema}".lb_schema_versions ORDER BY component, version`,
    );
    return rows.map((r) => `${r.component}@${r.version}`);
  }

  it('creates the schema, applies every step once and records it; a second run does nothing', async () => {
    const client = await connect(await server().freshDatabase());
    const first = await runPgMigrations(client, 'lbstate', [JOURNAL_PG_MIGRATIONS]);
    expect(first).toEqual({ journal: { from: 0, to: 2 } });
    expect(await versions(client, 'lbstate')).toEqual(['journal@1', 'journal@2']);
    const again = await runPgMigrations(client, 'lbstate', [JOURNAL_PG_MIGRATIONS]);
    expect(again).toEqual({ journal: { from: 2, to: 2 } });
    // The tables are in the schema, not in public, and the session's search_path is untouched.
    const { rows } = await client.query<{ t: string | null; u: string | null; p: string }>(
      `SELECT to_regclass('lbstate.lb_intents')::text AS t, to_regclass('public.lb_intents')::text AS u,
                current_setting('search_path') AS p`,
    );
    expect(rows[0]!.t).toBe('lbstate.lb_intents');
    expect(rows[0]!.u).toBeNull();
    expect(rows[0]!.p).toBe('"$user", public');
  });

  it('of two instances migrating at once, one migrates and the other then finds it done', async () => {
    const url = await server().freshDatabase();
    const a = await connect(url);
    const b = await connect(url);
    const results = await Promise.all([
      runPgMigrations(a, 'shared', [JOURNAL_PG_MIGRATIONS]),
      runPgMigrations(b, 'shared', [JOURNAL_PG_MIGRATIONS]),
    ]);
    const froms = results.map((r) => r.journal!.from).sort();
    expect(froms).toEqual([0, 2]);
    expect(await versions(a, 'shared')).toEqual(['journal@1', 'journal@2']);
  });

  it('keeps components apart: each has its own versions, and a new one is added to a migrated schema', async () => {
    const client = await connect(await server().freshDatabase());
    await runPgMigrations(client, 'parts', [JOURNAL_PG_MIGRATIONS]);
    const other: PgMigrationComponent = {
      name: 'other',
      migrations: [{ version: 1, sql: 'CREATE TABLE lb_other (id int PRIMARY KEY)' }],
    };
    const result = await runPgMigrations(client, 'parts', [JOURNAL_PG_MIGRATIONS, other]);
    expect(result).toEqual({ journal: { from: 2, to: 2 }, other: { from: 0, to: 1 } });
    expect(await versions(client, 'parts')).toEqual(['journal@1', 'journal@2', 'other@1']);
  });

  it('refuses a database newer than this build (STORE_SCHEMA_TOO_NEW) and changes nothing', async () => {
    const client = await connect(await server().freshDatabase());
    await runPgMigrations(client, 'ledgerbot', [JOURNAL_PG_MIGRATIONS]);
    await client.query(
      `INSERT INTO ledgerbot.lb_schema_versions (component, version) VALUES ('journal', 3)`,
    );
    const other: PgMigrationComponent = {
      name: 'other',
      migrations: [{ version: 1, sql: 'CREATE TABLE lb_other (id int)' }],
    };
    await expect(
      runPgMigrations(client, 'ledgerbot', [JOURNAL_PG_MIGRATIONS, other]),
    ).rejects.toMatchObject({
      code: 'STORE_SCHEMA_TOO_NEW',
      message: expect.stringMatching(/journal version 3.*only up to 2/) as unknown,
    });
    const { rows } = await client.query(`SELECT to_regclass('ledgerbot.lb_other') AS t`);
    expect(rows[0]).toEqual({ t: null });
  });

  it('a failing step leaves the previous version', async () => {
    const client = await connect(await server().freshDatabase());
    const broken: PgMigrationComponent = {
      name: 'journal',
      migrations: [
        ...JOURNAL_PG_MIGRATIONS.migrations,
        { version: 3, sql: 'CREATE TABLE lb_x (id int); SELECT no_such_function()' },
      ],
    };
    await runPgMigrations(client, 'ledgerbot', [JOURNAL_PG_MIGRATIONS]);
    await expect(runPgMigrations(client, 'ledgerbot', [broken])).rejects.toThrow(
      /no_such_function/,
    );
    expect(await versions(client, 'ledgerbot')).toEqual(['journal@1', 'journal@2']);
    const { rows } = await client.query(`SELECT to_regclass('ledgerbot.lb_x') AS t`);
    expect(rows[0]).toEqual({ t: null });
  });

  it('upgrades a database the previous version made (journal version 1), keeping its rows', async () => {
    const client = await connect(await server().freshDatabase());
    await client.query(readFileSync(V1_FIXTURE, 'utf8'));
    await client.query('RESET search_path');
    const result = await runPgMigrations(client, 'lb_v1', [JOURNAL_PG_MIGRATIONS]);
    expect(result).toEqual({ journal: { from: 1, to: 2 } });
    expect(await versions(client, 'lb_v1')).toEqual(['journal@1', 'journal@2']);
    const { rows } = await client.query<{ indexname: string }>(
      `SELECT indexname FROM pg_indexes WHERE schemaname = 'lb_v1' AND indexname = 'lb_intents_recent'`,
    );
    expect(rows).toHaveLength(1);
    const count = await client.query<{ n: string }>('SELECT count(*) AS n FROM lb_v1.lb_intents');
    expect(count.rows[0]!.n).toBe('3');
  });

  it.each(['Ledgerbot', 'a"b', 'x; DROP TABLE t', '', 'pg_catalog', 'a'.repeat(64), 'a-b'])(
    'refuses the schema name %j before touching the database',
    async (name) => {
      const client = await connect(server().url());
      await expect(runPgMigrations(client, name, [JOURNAL_PG_MIGRATIONS])).rejects.toMatchObject({
        code: 'STORE_BAD_ARGUMENT',
        message: expect.stringContaining('state.postgres.schema') as unknown,
      });
      const { rows } = await client.query<{ s: string }>('SELECT 1 AS s');
      expect(rows).toHaveLength(1);
    },
  );
});
