import { libpqUrl } from '../../store/pg/libpq-url.js';
import type pg from 'pg';
import { DEFAULTS } from '../../core/defaults.js';
import type { FleetConfig, PostgresConfig } from '../../runtime/config/bot-config.js';
import { FLEET_PG_MIGRATIONS } from '../../store/pg/fleet-pg-migrations.js';
import { loadPg } from '../../store/pg/load-pg.js';
import type { LeaseStore } from '../../store/pg/lease-store.js';
import { maskPgUrl, withoutPassword } from '../../store/pg/mask-pg-url.js';
import { runPgMigrations } from '../../store/pg/run-pg-migrations.js';
import { StoreError } from '../../store/store-error.js';
import { UsageError } from '../usage-error.js';

/** The leases' own small pool, with the fleet's tables made or upgraded. */
export async function openFleetPool(
  pgConfig: PostgresConfig,
  fleet: FleetConfig,
): Promise<pg.Pool> {
  const { Pool } = await loadPg();
  const pool = new Pool({
    connectionString: libpqUrl(pgConfig.url),
    max: 2,
    connectionTimeoutMillis: DEFAULTS.postgres.connectTimeoutMs,
    // A round must not wait for a connection longer than a lease lasts.
    statement_timeout: fleet.leasePeriodMs,
    application_name: 'ledgerbot-fleet',
  });
  pool.on('error', () => undefined);
  try {
    const client = await pool.connect();
    try {
      await runPgMigrations(client, pgConfig.schema, [FLEET_PG_MIGRATIONS]);
    } finally {
      client.release();
    }
    return pool;
  } catch (err) {
    await pool.end().catch(() => undefined);
    if (err instanceof StoreError) throw err;
    throw new StoreError(
      'STORE_OPEN_FAILED',
      `cannot open the fleet's tables at ${maskPgUrl(pgConfig.url)} (schema ${pgConfig.schema}): ${withoutPassword((err as Error).message, pgConfig.url)}`,
      { cause: err },
    );
  }
}

/** A schema's leases are one fleet's: another fleet's live member there is a config mistake. */
export async function refuseOtherFleet(
  leases: LeaseStore,
  fleet: FleetConfig,
  pgConfig: PostgresConfig,
): Promise<void> {
  const other = (await leases.members()).find((m) => m.live && m.name !== fleet.name);
  if (other !== undefined) {
    throw new UsageError(
      `schema ${pgConfig.schema} is used by fleet "${other.name}" (member ${other.instanceId}), not "${fleet.name}": a schema holds one fleet; give this fleet its own state.postgres.schema, or the same fleet.name`,
    );
  }
}
