import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import { openSqliteStore, SQLITE_STORE_FILE } from '../../store/open-sqlite-store.js';
import type { Store } from '../../store/store.js';
import { StoreError } from '../../store/store-error.js';

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
    const ask =
      config.http?.port === 0
        ? `${config.file} has http.port: 0 (a free port at each start), so \`${command}\` cannot find the bot's ops API: set a fixed port and restart the bot, or stop the bot and run this again`
        : undefined;
    throw new StoreError(
      'STORE_LOCKED',
      ask !== undefined
        ? `the state store in ${dir} is in use by a running ledgerbot (or another command writing to it), and ${ask}`
        : options.httpTried
          ? `the state store in ${dir} is in use by a running ledgerbot (or another command writing to it), and its ops API does not answer at the http.host/http.port of ${config.file}: is the bot running with another config? Fix the http section, or stop the bot, and run \`${command}\` again`
          : `the state store in ${dir} is in use by a running ledgerbot (or another command writing to it), and ${config.file} has no http section, so \`${command}\` cannot ask the bot to do it: add http: { port: 9464 } and restart the bot, or stop the bot and run this again`,
      { cause: err },
    );
  }
}
