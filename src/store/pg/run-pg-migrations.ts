import type { ClientBase } from 'pg';
import { StoreError } from '../store-error.js';
import type { PgMigrationComponent } from './pg-migration.js';
import { checkSchemaName, quoteIdentifier } from './quote-identifier.js';

/** What `runPgMigrations` did per component: the version before and after. */
export type PgMigrationResult = Record<string, { readonly from: number; readonly to: number }>;

/**
 * Brings `schema` (created if missing) up to date with every component, in one transaction under
 * a transaction-level advisory lock keyed by the schema: of two instances starting at once, one
 * migrates and the other waits for its commit, then finds nothing to do. A crash mid-migration
 * leaves the previous versions (PostgreSQL's DDL is transactional). A component the database
 * has at a version newer than this build knows is STORE_SCHEMA_TOO_NEW, and nothing changes.
 *
 * `client` must not be in a transaction; it is left outside one, with its `search_path` as it was.
 */
export async function runPgMigrations(
  client: ClientBase,
  schema: string,
  components: readonly PgMigrationComponent[],
): Promise<PgMigrationResult> {
  const q = quoteIdentifier(checkSchemaName(schema));
  const result: PgMigrationResult = {};
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `ledgerbot:migrate:${schema}`,
    ]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${q}`);
    await client.query(`SET LOCAL search_path TO ${q}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS lb_schema_versions (
         component text NOT NULL,
         version integer NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now(),
         PRIMARY KEY (component, version)
       )`,
    );
    const { rows } = await client.query<{ component: string; v: number }>(
      'SELECT component, max(version) AS v FROM lb_schema_versions GROUP BY component',
    );
    const current = new Map(rows.map((r) => [r.component, r.v]));
    for (const component of components) {
      const from = current.get(component.name) ?? 0;
      const latest = refuseNewer(component, from, schema);
      const steps = [...component.migrations]
        .filter((m) => m.version > from)
        .sort((a, b) => a.version - b.version);
      for (const m of steps) {
        await client.query(m.sql);
        await client.query('INSERT INTO lb_schema_versions (component, version) VALUES ($1, $2)', [
          component.name,
          m.version,
        ]);
      }
      result[component.name] = { from, to: Math.max(from, latest) };
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
  return result;
}

/**
 * The latest version of `component` this build knows; STORE_SCHEMA_TOO_NEW when `schema` holds `component` at a version this build does not know:
 * it is refused rather than misread (migrations and the CLI's reads alike).
 */
export function refuseNewer(
  component: PgMigrationComponent,
  version: number,
  schema: string,
): number {
  const latest = component.migrations.reduce((max, m) => Math.max(max, m.version), 0);
  if (version > latest) {
    throw new StoreError(
      'STORE_SCHEMA_TOO_NEW',
      `the PostgreSQL schema ${schema} has ${component.name} version ${version}, but this ledgerbot knows only up to ${latest}: run a newer ledgerbot, or point state.postgres.schema at another schema`,
    );
  }
  return latest;
}
