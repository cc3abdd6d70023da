import type { BotConfig } from '../../runtime/config/bot-config.js';
import type { JournalQueries } from '../../store/journal-queries.js';
import { openSqliteStore } from '../../store/open-sqlite-store.js';
import { openPgStore } from '../../store/pg/open-pg-store.js';
import { storeQueries } from '../../store/store-queries.js';
import type { Store } from '../../store/store.js';
import type { CommitFence, LeaseHold } from '../../store/pg/commit-fence.js';

/** A fleet member's store: the rules it owns, their checkpoints, writes fenced by their leases. */
export type FleetStoreOptions = {
  readonly rules: readonly string[];
  readonly fence: CommitFence;
  readonly holdsFor: (ruleIds: ReadonlySet<string>) => readonly LeaseHold[];
};

/** The bot's journal, the operator's reads of it, and how to close it. */
export type BotStore = {
  readonly store: Store;
  readonly queries: JournalQueries;
  readonly close: () => Promise<void> | void;
};

/**
 * The journal `run` works on: PostgreSQL when the config has `state.postgres`, else the SQLite
 * file in `state.dir` (held with its writer's lock). A shadow bot keeps its own SQLite journal in
 * `state.dir` either way, without the lock: it must never write the live bot's journal. A fleet
 * member's PostgreSQL store holds only the rules it owns (`fleet`).
 */
export async function openBotStore(
  config: BotConfig,
  options: {
    readonly shadow: boolean;
    readonly fleet?: FleetStoreOptions;
    /** Told if the SQLite store's checkpoint thread is given up (see WalCheckpointer). */
    readonly onCheckpointThreadFailure: (reason: string) => void;
  },
): Promise<BotStore> {
  const pg = config.state.postgres;
  if (pg !== undefined && !options.shadow) {
    const fleet = options.fleet;
    // A fleet's members share the schema under leases, and its writer lock (shared): a single
    // bot or a writing command (exclusive) cannot run beside them, and the commands ask a
    // member's ops API instead, which forwards to the rule's owner.
    const store = await openPgStore({
      url: pg.url,
      schema: pg.schema,
      poolSize: pg.poolSize,
      ...(fleet === undefined
        ? { exclusive: true }
        : {
            exclusive: 'shared',
            rules: fleet.rules,
            fence: fleet.fence,
            holdsFor: fleet.holdsFor,
          }),
    });
    return { store, queries: store.queries(), close: () => store.closeAsync() };
  }
  const store = openSqliteStore({
    dir: config.state.dir,
    exclusive: !options.shadow,
    groupCommit: true,
    checkpointThread: { onFailure: options.onCheckpointThreadFailure },
  });
  // The SQLite store answers the operator's reads itself.
  return { store, queries: storeQueries(store), close: () => store.close() };
}
