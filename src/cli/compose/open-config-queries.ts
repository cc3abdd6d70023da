import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import type { JournalQueries } from '../../store/journal-queries.js';
import { openSqliteStore, SQLITE_STORE_FILE } from '../../store/open-sqlite-store.js';
import { maskPgUrl } from '../../store/pg/mask-pg-url.js';
import { openPgQueries } from '../../store/pg/open-pg-queries.js';
import { StoreError } from '../../store/store-error.js';
import { storeQueries } from '../../store/store-queries.js';

/** The operator's reads of a config's journal, where it is (for messages), and its close. */
export type ConfigQueries = {
  readonly queries: JournalQueries;
  readonly where: string;
  close(): Promise<void>;
};

/**
 * Reads the journal of `config` without writing it, also while a bot runs on it: the SQLite
 * file read-only (its last commit), or the PostgreSQL schema's committed rows. Undefined when
 * there is no journal yet (the bot never ran with this config); `mustExist` throws
 * STORE_OPEN_FAILED, naming the directory or the database, instead.
 */
export async function openConfigQueries(
  config: BotConfig,
  options: { readonly mustExist: boolean },
): Promise<ConfigQueries | undefined> {
  const pg = config.state.postgres;
  if (pg !== undefined) {
    const handle = await openPgQueries({ url: pg.url, schema: pg.schema });
    if (handle !== undefined || !options.mustExist) return handle;
    throw new StoreError(
      'STORE_OPEN_FAILED',
      `there is no ledgerbot journal in the PostgreSQL state store at ${maskPgUrl(pg.url)} (schema ${pg.schema}) of ${config.file}: the bot has not run with this config yet`,
    );
  }
  const dir = config.state.dir;
  if (!existsSync(join(dir, SQLITE_STORE_FILE))) {
    if (!options.mustExist) return undefined;
    throw new StoreError(
      'STORE_OPEN_FAILED',
      `there is no state store in ${dir} (state.dir of ${config.file}): the bot has not run with this config yet`,
    );
  }
  const store = openSqliteStore({ dir, readonly: true });
  return {
    queries: storeQueries(store),
    where: `store ${dir}`,
    close: () => Promise.resolve(store.close()),
  };
}
