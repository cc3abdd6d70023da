import { libpqUrl } from './libpq-url.js';
import type pg from 'pg';
import { systemClock, type Clock } from '../../core/clock.js';
import { DEFAULTS } from '../../core/defaults.js';
import { StoreError } from '../store-error.js';
import type { CommitFence, LeaseHold } from './commit-fence.js';
import { JOURNAL_PG_MIGRATIONS } from './journal-pg-migrations.js';
import { loadPg, pgTypes, type Pg } from './load-pg.js';
import { maskPgUrl, withoutPassword } from './mask-pg-url.js';
import type { PgMigrationComponent } from './pg-migration.js';
import { PgStore } from './pg-store.js';
import { checkSchemaName } from './quote-identifier.js';
import { runPgMigrations } from './run-pg-migrations.js';
import { withStartupOption } from './with-startup-option.js';

export type PgStoreOptions = {
  /** `postgres://user:password@host:port/database`; the password never reaches a message. */
  readonly url: string;
  /** @default DEFAULTS.postgres.schema */
  readonly schema?: string;
  /** @default DEFAULTS.postgres.poolSize */
  readonly poolSize?: number;
  readonly clock?: Clock;
  /** The checkpoint's row; default 'default'. */
  readonly owner?: string;
  /** Group commit after a window instead of at the end of the turn. */
  readonly groupCommitWindowMs?: number;
  /** @default DEFAULTS.postgres.connectTimeoutMs */
  readonly connectTimeoutMs?: number;
  /** The schema's parts to migrate at open; default the journal's. */
  readonly components?: readonly PgMigrationComponent[];
  /**
   * Hold the schema's writer lock (a session advisory lock on a connection of its own) until
   * close, so a second bot (or writing command) on the same schema and owner fails to open it
   * (STORE_LOCKED) instead of sharing its checkpoint. A fleet's members share a schema under
   * leases instead, each holding the lock `shared`: no single bot nor writing command runs
   * beside them (those take it exclusively), while the members share the schema. Default false.
   */
  readonly exclusive?: boolean | 'shared';
  readonly fence?: CommitFence;
  readonly holdsFor?: (ruleIds: ReadonlySet<string>) => readonly LeaseHold[];
  /**
   * A fleet member's store: holds only these rules' state, and their checkpoints (a row each)
   * instead of `owner`'s (see PgStoreInit.rules).
   */
  readonly rules?: readonly string[];
};

/** What the store's connections set as they start (see `openPgStore`). */
export const PLAN_OPTION = '-c plan_cache_mode=force_custom_plan';

/**
 * Opens the PostgreSQL store: connects, brings the schema up to date (see `runPgMigrations`:
 * instances starting together migrate once), and loads the journal's memory. Every failure is
 * StoreError STORE_OPEN_FAILED (or STORE_SCHEMA_TOO_NEW) naming the database with its password
 * masked.
 */
export async function openPgStore(options: PgStoreOptions): Promise<PgStore> {
  const schema = checkSchemaName(options.schema ?? DEFAULTS.postgres.schema);
  const where = `${maskPgUrl(options.url)} (schema ${schema})`;
  const pg = await loadPg();
  const pool = new pg.Pool({
    // Each run of the group commit (a statement prepared once per connection) is planned with its
    // values. After five runs PostgreSQL would settle on one plan for any values, made from the
    // statistics of the moment, when the journal is nearly empty: that plan read lb_intents in
    // full at every commit (test/store/pg/pg-commit-plans.test.ts). Set at connection start
    // (libpq's `options`, after any the URL gives), so no query of the connection runs before it.
    ...withStartupOption(libpqUrl(options.url), PLAN_OPTION),
    max: options.poolSize ?? DEFAULTS.postgres.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULTS.postgres.connectTimeoutMs,
    types: pgTypes(pg),
    application_name: 'ledgerbot',
  });
  // An idle connection's failure (the server restarted) must not crash the process: the next
  // query on the pool fails, or reconnects.
  pool.on('error', () => undefined);
  let lock: pg.Client | undefined;
  try {
    const client = await pool.connect();
    try {
      await runPgMigrations(client, schema, options.components ?? [JOURNAL_PG_MIGRATIONS]);
    } finally {
      client.release();
    }
    if (options.exclusive === true || options.exclusive === 'shared') {
      lock = await writerLock(pg, options, schema, where);
    }
    const held = lock;
    const windowMs = options.groupCommitWindowMs ?? 0;
    return await PgStore.open({
      ...(held === undefined ? {} : { onClose: () => held.end() }),
      pool,
      schema,
      clock: options.clock ?? systemClock,
      where,
      ...(options.owner === undefined ? {} : { owner: options.owner }),
      ...(windowMs > 0 ? { scheduleCommit: (commit) => setTimeout(commit, windowMs) } : {}),
      ...(options.fence === undefined ? {} : { fence: options.fence }),
      ...(options.holdsFor === undefined ? {} : { holdsFor: options.holdsFor }),
      ...(options.rules === undefined ? {} : { rules: options.rules }),
    });
  } catch (err) {
    await pool.end().catch(() => undefined);
    await lock?.end().catch(() => undefined);
    // The store's own errors name the database masked already.
    if (err instanceof StoreError) throw err;
    const message = withoutPassword((err as Error).message, options.url);
    throw new StoreError(
      'STORE_OPEN_FAILED',
      `cannot open the PostgreSQL state store at ${where}: ${message}; check state.postgres.url, that the server is up and that the user may create tables in the schema`,
    );
  }
}

/**
 * The writer's lock of `schema` and the owner: a session advisory lock, held by a connection
 * that does nothing else until the store closes (a lost connection loses the lock with it).
 */
async function writerLock(
  pg: Pg,
  options: PgStoreOptions,
  schema: string,
  where: string,
): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: libpqUrl(options.url),
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULTS.postgres.connectTimeoutMs,
    application_name: 'ledgerbot-lock',
  });
  client.on('error', () => undefined);
  await client.connect();
  const owner = options.owner ?? 'default';
  const shared = options.exclusive === 'shared';
  const { rows } = await client.query<{ ok: boolean }>(
    shared
      ? 'SELECT pg_try_advisory_lock_shared(hashtext($1)) AS ok'
      : 'SELECT pg_try_advisory_lock(hashtext($1)) AS ok',
    [`ledgerbot:writer:${schema}:${owner}`],
  );
  if (rows[0]?.ok !== true) {
    await client.end().catch(() => undefined);
    throw new StoreError(
      'STORE_LOCKED',
      shared
        ? `the PostgreSQL state store at ${where} is in use by a running ledgerbot without \`fleet\` (or a command writing to it): a fleet's members share a schema only with each other; give the fleet its own state.postgres.schema`
        : `the PostgreSQL state store at ${where} is in use by a running ledgerbot (or a command writing to it): two bots must not share a schema; give each its own state.postgres.schema`,
    );
  }
  return client;
}
