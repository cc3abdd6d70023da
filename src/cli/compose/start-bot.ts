import type { Logger as PinoLogger } from 'pino';
import { LedgerbotError } from '../../core/ledgerbot-error.js';
import { awaitParticipant } from '../../runtime/await-participant.js';
import { warnUnknownParties } from '../../runtime/unknown-parties.js';
import { createBot, type Bot } from '../../runtime/bot.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import { manualSlotRunner, type ManualSlotOutcome } from '../../runtime/ops/manual-slot.js';
import type { OpsFleet } from '../../runtime/ops/ops-fleet.js';
import { ReloadHistory } from '../../runtime/ops/reload-history.js';
import { retryPackagesRead } from '../../runtime/retry-packages-read.js';
import { systemClock } from '../../core/clock.js';
import {
  startOpsServer,
  type OpsServer,
  type ReloadOutcome,
} from '../../runtime/ops/ops-server.js';
import type { LedgerClient } from '../../ledger/ledger-client.js';
import type { Sandbox } from '../../sandbox/start-sandbox.js';
import type { Store } from '../../store/store.js';
import { ledgerbotVersion } from '../../core/ledgerbot-version.js';
import { CelEnvironment } from '../../rules/cel/cel-environment.js';
import { CelProgramCache } from '../../rules/cel-program-cache.js';
import type { RuleSet } from '../../rules/compiled-rule.js';
import { CompiledRulesFile } from './compiled-rules-file.js';
import { RuleCacheFile } from './rule-cache-file.js';
import { openBotStore, type FleetStoreOptions } from './open-bot-store.js';
import { botOptionsOf, type BotRunFlags } from './bot-options-of-config.js';
import { BotCatalogue } from './bot-catalogue.js';
import { loadConfigRules, ruleNoteLoggers } from './load-config-rules.js';
import { firstRuleCheck } from './first-rule-check.js';
import { openConfigLedger } from './open-config-ledger.js';
import { ruleReloader } from './rule-reloader.js';
import { UsageError } from '../usage-error.js';

export type RunningBot = {
  readonly bot: Bot;
  /** The bot's journal (a fleet member drops a dead letter asked for on another member). */
  readonly store: Store;
  readonly sandbox: Sandbox | undefined;
  /** The ops HTTP server, when the config has `http`. */
  readonly ops: OpsServer | undefined;
  /** Re-reads the rule files and swaps them in if all are valid (see `ruleReloader`). */
  reload(): Promise<ReloadOutcome>;
  /** Runs a slot of a schedule rule in the bot (`manualSlotRunner`: the ops API's, and a fleet's). */
  runSlot(ruleId: string, at: number): Promise<ManualSlotOutcome>;
  /** Stops the bot, then closes the client, the store and the sandbox. */
  close(): Promise<void>;
};

export type StartBotOptions = BotRunFlags & {
  /** Aborts the start (the process is told to stop while it waits for the participant). */
  readonly signal?: AbortSignal;
  /** A fleet member's bot: the rules it owns, its fenced store, its `/status` (see FleetMember). */
  readonly fleet?: FleetBotHooks;
};

/** What a fleet member (`startFleetMember`) changes in the bot it starts. */
export type FleetBotHooks = {
  /** Every rule set loaded (start, reloads) goes through this: it returns the rules to run. */
  readonly select: (ruleSet: RuleSet) => RuleSet;
  readonly store: FleetStoreOptions;
  /**
   * Records where the rules new to the fleet begin (their checkpoint rows), before the bot
   * starts (`start`: so the member is not ready before) and before a reloaded set is taken
   * (`reload`, with that set's rules: before the member asks for their leases).
   */
  readonly origins: (
    ledger: LedgerClient,
    when: 'start' | 'reload',
    ruleIds?: readonly string[],
  ) => Promise<void>;
  /** `/status`'s `fleet`, and the actions on rules another member runs. */
  readonly ops: OpsFleet;
  /** The rules paused fleet-wide: the bot starts with them paused (`BotOptions.pausedAtStart`). */
  readonly pausedAtStart?: readonly string[];
  /** Whether the member still holds the rule's lease by its own clock (`BotOptions.maySubmit`). */
  readonly maySubmit?: (ruleId: string) => boolean;
  /** Each rule's own checkpoint row, read as the bot starts (`BotOptions.ruleCheckpoints`). */
  readonly ruleCheckpoints?: () => Promise<ReadonlyMap<string, number>>;
};

/**
 * How long after a start (or a reload) the rules it compiled are written to the state directory,
 * unless the bot stops first (then they are written at the stop). Encoding 1,000 rules takes the
 * event loop for about a tenth of a second: not while the start waits, nor while a fresh bot is
 * being measured or catching up; a bot that never stops cleanly still writes them.
 */
const COMPILED_RULES_WRITE_DELAY_MS = 5 * 60_000;

/** Errors that name a mistake in the config: exit 2, not 1 (see `startBot`). */
const CONFIG_MISTAKES: ReadonlySet<string> = new Set([
  'UNKNOWN_PARTY',
  'UNKNOWN_USER',
  'OPS_LISTEN_FAILED',
]);

/**
 * Builds everything `run` needs from the config and starts the bot: the sandbox in embedded mode
 * (with the aliases allocated and a user that can act as them), the auth provider, the client,
 * the store, the rules and the ops server. The ops server is up before the participant is
 * reached: while the participant does not answer (refused, DNS, 503), the start is retried
 * with backoff (`awaitParticipant`) for up to `ledger.startTimeout` (default: until it answers
 * or `signal` aborts) and `/readyz` says why. Rule errors, an unknown party or user and an ops
 * port that cannot be listened on are UsageErrors (exit 2); a refusal or the timeout are RuntimeErrors (exit 1).
 */
export async function startBot(
  config: BotConfig,
  logger: PinoLogger,
  options: StartBotOptions = {},
): Promise<RunningBot> {
  const shadow = options.shadow === true;
  const select = options.fleet?.select ?? ((set: RuleSet) => set);
  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanup = async (): Promise<void> => {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        logger.warn({ error: (err as Error).message }, 'cleanup failed');
      }
    }
  };
  try {
    // A mistake in the rules (or in a package file) exits 2 before the store is opened.
    // Embedded, they are checked first, against the models. With a participant, against its
    // packages when it answers at once, else against the config's package files and models
    // alone, then against its packages once it answers (firstRuleCheck). A rule on an
    // interface only the participant's packages know passes the config's check (reading
    // `event.view` is then a warning); the participant's decides, and logs the warnings left.
    const notes = ruleNoteLoggers(config, logger);
    const catalogue = new BotCatalogue(config, logger);
    // Shared by the loads below and every reload: the second load (and a reload of unchanged
    // files) reuses the checked files, the CEL environment and its programs instead of making
    // them again (the rules are still compiled against this load's parties and packages).
    const cel = CelEnvironment.create();
    const shared = {
      cel,
      programs: new CelProgramCache(cel),
      sourceCache: RuleCacheFile.load({
        stateDir: config.state.dir,
        version: ledgerbotVersion(),
        logger: logger.child({ component: 'rule-cache' }),
        readOnly: shadow,
      }),
    };
    // The rules as last compiled, taken when these inputs are those they were compiled from.
    // A set compiled now is written at the stop, or a while after the start (see
    // COMPILED_RULES_WRITE_DELAY_MS), not while the start waits.
    const compiled = new CompiledRulesFile({
      stateDir: config.state.dir,
      version: ledgerbotVersion(),
      logger: logger.child({ component: 'compiled-rules' }),
      readOnly: shadow,
      writeDelayMs: COMPILED_RULES_WRITE_DELAY_MS,
    });
    cleanups.push(() => compiled.flush());
    const load = { ...shared, compiled, ...notes };
    const url = config.ledger.endpoint.kind === 'url';
    const embeddedRules = url ? undefined : await loadConfigRules(config, { ...load, catalogue });
    let waitingFor: string | undefined;
    const ledger = await openConfigLedger(config, logger, {
      packageFiles: catalogue.packageFiles,
    });
    cleanups.push(() => ledger.close());
    const { client, parties, sandbox } = ledger;
    const first =
      embeddedRules === undefined
        ? await firstRuleCheck(config, client, {
            catalogue,
            load,
            logger: logger.child({ component: 'rule-check' }),
            ...(options.signal === undefined ? {} : { signal: options.signal }),
          })
        : { ruleSet: embeddedRules, participant: false };
    const ruleSet = first.ruleSet;
    // A shadow bot writes nothing, so it need not lock the state out from operator tools.
    const journal = await openBotStore(config, {
      shadow,
      ...(options.fleet === undefined ? {} : { fleet: options.fleet.store }),
      onCheckpointThreadFailure: (reason) =>
        logger.warn(
          { component: 'store', reason },
          'the state store checkpoints inside its commits again: its checkpoint thread failed',
        ),
    });
    cleanups.push(() => journal.close());
    const { store, queries } = journal;
    const bot = createBot({
      ...botOptionsOf(
        config,
        {
          rules: select(ruleSet),
          parties,
          packageNameOf: catalogue.packageNameOf,
          ledger: client,
          store,
          logger,
          embedded: sandbox !== undefined,
        },
        options,
      ),
      ...(options.fleet?.pausedAtStart === undefined
        ? {}
        : { pausedAtStart: options.fleet.pausedAtStart }),
      ...(options.fleet?.maySubmit === undefined ? {} : { maySubmit: options.fleet.maySubmit }),
      ...(options.fleet?.ruleCheckpoints === undefined
        ? {}
        : { ruleCheckpoints: options.fleet.ruleCheckpoints }),
    });
    // Every reload (SIGHUP, the file watch, POST /rules/reload) is recorded for GET /reload.
    const reloads = new ReloadHistory(systemClock);
    const fleet = options.fleet;
    const reload = reloads.recording(
      ruleReloader(
        config,
        bot,
        logger,
        catalogue,
        { ...shared, compiled },
        select,
        fleet === undefined
          ? undefined
          : (set) =>
              fleet.origins(
                client,
                'reload',
                set.rules.map((r) => r.id),
              ),
      ),
    );
    // run-slot while the bot runs: the bot runs the slot, so the store keeps one writer.
    const runSlot = manualSlotRunner({
      bot,
      ledger: client,
      parties,
      packageNameOf: catalogue.packageNameOf,
      journal: store,
    });
    let ops: OpsServer | undefined;
    if (config.http !== undefined) {
      ops = await startOpsServer({
        bot,
        store,
        queries,
        ledger: client,
        host: config.http.host,
        port: config.http.port,
        readyMaxLag: config.http.readyMaxLag,
        readOnly: config.http.readOnly,
        allowedHosts: config.http.allowedHosts,
        ...(config.http.token === undefined ? {} : { token: config.http.token }),
        waitingFor: () => waitingFor,
        reload,
        reloads,
        explain: { ledger: client, parties, packageNameOf: catalogue.packageNameOf },
        runSlot,
        ...(options.fleet === undefined ? {} : { fleet: options.fleet.ops }),
        logger,
      });
      const server = ops;
      cleanups.push(() => server.close());
    }
    if (url && !first.participant) {
      await awaitParticipant({
        ledger: client,
        userId: config.ledger.userId,
        checkUser: config.ledger.auth.type !== 'none',
        url: client.connection.url,
        ...(config.ledger.startTimeoutMs === undefined
          ? {}
          : { timeoutMs: config.ledger.startTimeoutMs }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        onWaiting: (reason) => (waitingFor = reason),
        logger,
      });
      await warnUnknownParties(client, parties, logger, { timeoutMs: 5_000 });
      catalogue.connect(client);
      // The participant's packages: the rules are checked again (an error exits 2), and the
      // bot starts with them compiled against every package (an interface is known as one).
      // A transient failure to read them is waited out like the participant itself.
      const rules = await retryPackagesRead(() => loadConfigRules(config, { ...load, catalogue }), {
        ...(config.ledger.startTimeoutMs === undefined
          ? {}
          : { timeoutMs: config.ledger.startTimeoutMs }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        onWaiting: (reason) => (waitingFor = reason),
        logger: logger.child({ component: 'packages' }),
      });
      bot.reloadRules(select(rules));
    }
    if (fleet !== undefined) {
      // A rule's history in the fleet begins when the first member that knows it starts: its
      // checkpoint row is there before this member is ready, and before it asks for a lease.
      waitingFor = "recording where the fleet's new rules begin";
      await fleet.origins(client, 'start');
      waitingFor = undefined;
    }
    cleanups.push(() => bot.stop());
    await bot.start();
    return {
      bot,
      store,
      sandbox,
      ops,
      reload,
      runSlot,
      close: async () => {
        await bot.stop();
        await cleanup();
      },
    };
  } catch (err) {
    await cleanup();
    if (err instanceof LedgerbotError && CONFIG_MISTAKES.has(err.code)) {
      throw new UsageError(err.message, { cause: err });
    }
    throw err;
  }
}
