import type { BotConfig } from '../../runtime/config/bot-config.js';
import type { JournalQueries } from '../../store/journal-queries.js';
import { openSqliteStore } from '../../store/open-sqlite-store.js';
import { openPgStore } from '../../store/pg/open-pg-store.js';
import { storeQueries } from '../../store/store-queries.js';
import type { Store } from '../../store/store.js';

/** The bot's journal, the operator's reads of it, and how to close it. */
export type BotStore = {
  readonly store: Store;
  readonly queries: JournalQueries;
  readonly close: () => Promise<void> | void;
};

/**
 * The journal `run` works on: PostgreSQL when the config has `state.postgres`, else the SQLite
 * file in `state.dir` (held with its writer's lock). A shadow bot keeps its own SQLite journal in
 * `state.dir` either way, without the lock: it must never write the live bot's journal.
 */
export async function openBotStore(
  config: BotConfig,
  options: { readonly shadow: boolean },
): Promise<BotStore> {
  const pg = config.state.postgres;
  if (pg !== undefined && !options.shadow) {
    const store = await openPgStore({
      url: pg.url,
      schema: pg.schema,
      poolSize: pg.poolSize,
      exclusive: true,
    });
    return { store, queries: store.queries(), close: () => store.closeAsync() };
  }
  const store = openSqliteStore({
    dir: config.state.dir,
    exclusive: !options.shadow,
    groupCommit: true,
  });
  // The SQLite store answers the operator's reads itself.
  return { store, queries: storeQueries(store), close: () => store.close() };
}
