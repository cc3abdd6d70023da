/**
 * One step of a PostgreSQL schema. Forward-only: a released step is never edited, the next one is
 * added. The SQL runs with `search_path` set to the store's schema, so it names its tables
 * unqualified.
 */
export type PgMigration = { readonly version: number; readonly sql: string };

/**
 * A part of the schema with its own version sequence (`journal`, `fleet`), recorded in
 * `lb_schema_versions` under `name`: parts evolve apart, and a database has only the parts its
 * users asked for.
 */
export type PgMigrationComponent = {
  readonly name: string;
  readonly migrations: readonly PgMigration[];
};
