import { StoreError } from '../store-error.js';

/**
 * A schema name the store accepts: lower-case letters, digits and `_`, starting with a letter or
 * `_`, at most 63 characters (PostgreSQL's limit), and not `pg_…` (reserved for the system).
 * Narrower than PostgreSQL allows, so a name needs no thought about case folding or quoting in
 * `psql` either; the store still quotes every identifier it writes.
 */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Throws STORE_BAD_ARGUMENT naming `what` unless `name` is a schema name the store accepts. */
export function checkSchemaName(name: string, what = 'state.postgres.schema'): string {
  if (!SCHEMA_NAME.test(name) || name.startsWith('pg_')) {
    throw new StoreError(
      'STORE_BAD_ARGUMENT',
      `${what} must be 1-63 lower-case letters, digits or _, starting with a letter or _, and not pg_…; got ${JSON.stringify(name)}`,
    );
  }
  return name;
}

/** A PostgreSQL identifier, quoted: `"name"`, with any `"` doubled. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
