import { JOURNAL_PG_MIGRATIONS } from './journal-pg-migrations.js';
import { refuseNewer } from './run-pg-migrations.js';
import { libpqUrl } from './libpq-url.js';
import { DEFAULTS } from '../../core/defaults.js';
import { StoreError } from '../store-error.js';
import { maskPgUrl, withoutPassword } from './mask-pg-url.js';
import { loadPg, pgTypes } from './load-pg.js';
import type { JournalContents } from '../journal-transfer.js';
import { PgJournalQueries } from './pg-journal-queries.js';
import { exportPgJournal } from './pg-journal-transfer.js';
import { checkSchemaName, quoteIdentifier } from './quote-identifier.js';

/** The operator's reads of a PostgreSQL journal, for a command that only reads it. */
export type PgQueriesHandle = {
  readonly queries: PgJournalQueries;
  /** The whole journal of the default owner, in one snapshot (`ledgerbot state export`). */
  exportJournal(): Promise<JournalContents>;
  /** The database, password masked, and the schema: for messages. */
  readonly where: string;
  close(): Promise<void>;
};

/**
 * Connects to read a journal (`ledgerbot dead-letters list`, `schedule`): no migration and no
 * lock, so it works beside a running bot. Undefined when the schema has no journal (no bot ran
 * with it yet); STORE_OPEN_FAILED, naming the database with its password masked, when it cannot
 * connect.
 */
export async function openPgQueries(options: {
  readonly url: string;
  readonly schema: string;
}): Promise<PgQueriesHandle | undefined> {
  const schema = checkSchemaName(options.schema);
  const where = `${maskPgUrl(options.url)} (schema ${schema})`;
  const pg = await loadPg();
  const pool = new pg.Pool({
    connectionString: libpqUrl(options.url),
    max: 2,
    connectionTimeoutMillis: DEFAULTS.postgres.connectTimeoutMs,
    types: pgTypes(pg),
    application_name: 'ledgerbot-cli',
  });
  pool.on('error', () => undefined);
  let found: boolean;
  try {
    const { rows } = await pool.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [
      `${quoteIdentifier(schema)}.lb_intents`,
    ]);
    found = rows[0]?.t != null;
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new StoreError(
      'STORE_OPEN_FAILED',
      `cannot open the PostgreSQL state store at ${where}: ${withoutPassword((err as Error).message, options.url)}`,
    );
  }
  if (!found) {
    await pool.end().catch(() => undefined);
    return undefined;
  }
  // Read, never migrated: a schema a newer ledgerbot wrote is refused, not misread.
  const { rows: versions } = await pool.query<{ v: number | null }>(
    `SELECT max(version) AS v FROM ${quoteIdentifier(schema)}.lb_schema_versions WHERE component = $1`,
    [JOURNAL_PG_MIGRATIONS.name],
  );
  try {
    refuseNewer(JOURNAL_PG_MIGRATIONS, versions[0]?.v ?? 0, schema);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  return {
    queries: new PgJournalQueries(pool, schema),
    exportJournal: () => exportPgJournal(pool, schema, 'default'),
    where,
    close: () => pool.end(),
  };
}
