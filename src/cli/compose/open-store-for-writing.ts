import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import { openSqliteStore, SQLITE_STORE_FILE } from '../../store/open-sqlite-store.js';
import type { Store } from '../../store/store.js';
import { StoreError } from '../../store/store-error.js';
import { maskPgUrl } from '../../store/pg/mask-pg-url.js';
import { openPgQueries } from '../../store/pg/open-pg-queries.js';
import { openPgStore } from '../../store/pg/open-pg-store.js';

/**
 * The state store of `config` for a CLI command that writes it while no bot runs (run-slot,
 * dead-letters retry and drop), holding the store's single-writer lock until it is closed: a
 * bot started meanwhile is refused (STORE_LOCKED) instead of writing beside the command.
 *
 * Throws StoreError STORE_LOCKED, saying what to do, when a running bot (or another writing
 * command) holds the lock: the command must then go through the bot's ops API, which needs
 * `http` in the config and the bot answering there. `httpTried`: the API was tried and did not
 * answer. `mustExist`: refuse a state directory without a store (the bot never ran there).
 */
export function openStoreForWriting(
  config: BotConfig,
  command: string,
  options: { readonly httpTried: boolean; readonly mustExist: boolean },
): Store {
  const dir = config.state.dir;
  if (options.mustExist && !existsSync(join(dir, SQLITE_STORE_FILE))) {
    throw new StoreError(
      'STORE_OPEN_FAILED',
      `there is no state store in ${dir} (state.dir of ${config.file}): the bot has not run with this config yet`,
    );
  }
  try {
    return openSqliteStore({ dir, exclusive: true });
  } catch (err) {
    if (!(err instanceof StoreError) || err.code !== 'STORE_LOCKED') throw err;
    throw lockedError(config, command, options.httpTried, `the state store in ${dir}`, err);
  }
}

/** A store a CLI command writes, and its close, which resolves once its writes are in. */
export type WritableStore = {
  readonly store: Store;
  /** The store as messages name it (a PostgreSQL URL with its password masked). */
  readonly where: string;
  close(): Promise<void>;
};

/**
 * `openStoreForWriting` for either store: the config's PostgreSQL journal (holding its writer
 * lock, refused with the same STORE_LOCKED advice while a bot runs on it), or its SQLite file.
 */
export async function openConfigStoreForWriting(
  config: BotConfig,
  command: string,
  options: { readonly httpTried: boolean; readonly mustExist: boolean },
): Promise<WritableStore> {
  const pg = config.state.postgres;
  if (pg === undefined) {
    const store = openStoreForWriting(config, command, options);
    return {
      store,
      where: `store ${config.state.dir}`,
      close: () => Promise.resolve(store.close()),
    };
  }
  if (options.mustExist) {
    const found = await openPgQueries({ url: pg.url, schema: pg.schema });
    if (found === undefined) {
      throw new StoreError(
        'STORE_OPEN_FAILED',
        `there is no ledgerbot journal in the PostgreSQL state store at ${maskPgUrl(pg.url)} (schema ${pg.schema}) of ${config.file}: the bot has not run with this config yet`,
      );
    }
    await found.close();
  }
  try {
    const store = await openPgStore({
      url: pg.url,
      schema: pg.schema,
      poolSize: 2,
      exclusive: true,
    });
    return {
      store,
      where: `store ${maskPgUrl(pg.url)} (schema ${pg.schema})`,
      close: () => store.closeAsync(),
    };
  } catch (err) {
    if (!(err instanceof StoreError) || err.code !== 'STORE_LOCKED') throw err;
    const where = `the PostgreSQL state store at ${maskPgUrl(pg.url)} (schema ${pg.schema})`;
    throw lockedError(config, command, options.httpTried, where, err);
  }
}

function lockedError(
  config: BotConfig,
  command: string,
  httpTried: boolean,
  where: string,
  cause: StoreError,
): StoreError {
  const ask =
    config.http?.port === 0
      ? `${config.file} has http.port: 0 (a free port at each start), so \`${command}\` cannot find the bot's ops API: set a fixed port and restart the bot, or stop the bot and run this again`
      : undefined;
  return new StoreError(
    'STORE_LOCKED',
    ask !== undefined
      ? `${where} is in use by a running ledgerbot (or another command writing to it), and ${ask}`
      : httpTried
        ? `${where} is in use by a running ledgerbot (or another command writing to it), and its ops API does not answer at the http.host/http.port of ${config.file}: is the bot running with another config? Fix the http section, or stop the bot, and run \`${command}\` again`
        : `${where} is in use by a running ledgerbot (or another command writing to it), and ${config.file} has no http section, so \`${command}\` cannot ask the bot to do it: add http: { port: 9464 } and restart the bot, or stop the bot and run this again`,
    { cause },
  );
}
