import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger as PinoLogger } from 'pino';
import { systemClock } from '../../core/clock.js';
import type { RuleSet } from '../../rules/compiled-rule.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import type { LedgerClient } from '../../ledger/ledger-client.js';
import type { OpsFleet } from '../../runtime/ops/ops-fleet.js';
import { startOffsetOf } from '../../runtime/start-offset.js';
import type { ReloadOutcome } from '../../runtime/ops/reload-history.js';
import type { LeaseHold } from '../../store/pg/commit-fence.js';
import { FleetRequests, type FleetRequest } from '../../store/pg/fleet-requests.js';
import { afterRestarts } from './after-restarts.js';
import { carryOutFleetRequest } from './carry-out-fleet-request.js';
import { leaseFence } from '../../store/pg/lease-fence.js';
import { LeaseKeeper } from '../../store/pg/lease-keeper.js';
import { LeaseStore } from '../../store/pg/lease-store.js';
import { withoutPassword } from '../../store/pg/mask-pg-url.js';
import { readRuleCheckpoints, recordRuleOrigins } from '../../store/pg/rule-origins.js';
import { StoreError } from '../../store/store-error.js';
import { UsageError } from '../usage-error.js';
import { fleetStatus } from './fleet-status.js';
import { openFleetPool, refuseOtherFleet } from './open-fleet-pool.js';
import { RemovedRules } from './removed-rules.js';
import { FleetRequestRounds } from './fleet-request-rounds.js';
import { startBot, type RunningBot, type StartBotOptions } from './start-bot.js';

/** A running fleet member (`run` with `fleet:` in the config). */
export type FleetMember = {
  readonly instanceId: string;
  /** The bot running the rules this member owns now (a new one at every change of ownership). */
  current(): RunningBot | undefined;
  /** Settles when the member cannot go on: a bot failed for another reason than a lost lease. */
  readonly done: Promise<void>;
  /** Why it ended (`done`), or undefined. */
  failure(): unknown;
  /** Re-reads the rule files (see `ruleReloader`); the fleet shares out a changed set of rules. */
  reload(): Promise<ReloadOutcome>;
  /** Stops the bot (committing its writes), releases every lease and leaves the fleet. */
  close(): Promise<void>;
};

/**
 * Starts a fleet member: a lease keeper over the config's rules (`LeaseKeeper`: a fair share of
 * them, one owner per rule), and a bot that runs the rules this member owns.
 *
 * On every change of what it owns (`acquired`, `lost`, `releasing`), the member stops its bot
 * and starts a new one with the rules it owns then, on a store that loads exactly those rules'
 * state: their open intents (re-driven under the same command ids: the ledger's deduplication
 * turns away an effect the old owner already submitted), their event intents above the lowest
 * of their checkpoints (a rule re-reading events it had acted on finds its intents recorded),
 * their dead letters and slot records. The stream resumes from that lowest checkpoint, and each
 * rule evaluates only the events after its own (`BotOptions.ruleCheckpoints`). A
 * restart is the bot's own crash-recovery path, so a take-over is exactly as safe as a restart;
 * its cost (a second or so, the compiled rules are cached) is paid only when ownership moves.
 *
 * A lost lease is not isolated inside the running bot: its store commits every rule's writes in
 * one statement, and the fence refuses the whole statement (STORE_FENCED) once one rule in it is
 * lost. The member treats a fenced bot as a lost lease, not a failure: it starts a new bot with
 * the rules it still owns, which replays their uncommitted writes from their checkpoints.
 *
 * Every write is fenced by the generation each lease had when the bot's store loaded its rule
 * (stamped at load), so a rule lost and taken again is never written from its old state.
 */
export async function startFleetMember(
  config: BotConfig,
  logger: PinoLogger,
  options: StartBotOptions = {},
): Promise<FleetMember> {
  const fleet = config.fleet;
  const pgConfig = config.state.postgres;
  if (fleet === undefined || pgConfig === undefined) {
    throw new UsageError('a fleet member needs `fleet` and `state.postgres` in its config');
  }
  const log = logger.child({ component: 'fleet' });
  const instanceId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const pool = await openFleetPool(pgConfig, fleet);
  const leases = new LeaseStore(pool, pgConfig.schema, fleet.leasePeriodMs);
  const requests = new FleetRequests(pool, pgConfig.schema, fleet.leasePeriodMs);
  const me = { instanceId, name: fleet.name };

  let owned: ReadonlySet<string> = new Set();
  /** The generation of each owned lease when the running bot's store loaded it. */
  let stamped = new Map<string, number>();
  let ruleIds: readonly string[] = [];
  let startingIds: readonly string[] = [];
  /** The fleet's rules as this member loaded them (`ruleIds`'s), for a run-slot it forwards. */
  let known: RuleSet = { rules: [], warnings: [] };
  let startingSet: RuleSet = known;
  let starting = true;
  /** Set once the first bot runs: a rule without a checkpoint row later is new (ledger end). */
  let joined = false;
  const removed = new RemovedRules({
    pool,
    schema: pgConfig.schema,
    url: pgConfig.url,
    me: instanceId,
    leaseMs: fleet.leasePeriodMs,
    log,
  });
  let running: RunningBot | undefined;
  let chain: Promise<void> = Promise.resolve();
  let closed = false;
  /** Set at close: the keeper's last `releasing` stops the bot and starts none. */
  let leaving = false;
  let failure: unknown;
  let endMember: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (endMember = resolve));
  const fail = (err: unknown): void => {
    if (failure === undefined) failure = err;
    endMember();
  };

  const keeper = new LeaseKeeper({
    store: leases,
    schema: pgConfig.schema,
    me,
    clock: systemClock,
    ruleIds: [],
    events: {
      acquired: (holds) => {
        log.info({ rules: ids(holds) }, 'rules acquired');
        void restart(new Set());
      },
      lost: (holds) => {
        log.warn({ rules: ids(holds) }, 'rules lost (their leases were taken or ran out)');
        void restart(new Set());
      },
      // The keeper waits for this before it releases: the rules stop and commit first.
      releasing: async (holds) => {
        log.info({ rules: ids(holds) }, 'rules handed on');
        // Only the stop is awaited (the renewal of the other leases waits for this hook); the
        // bot over the rules kept starts after. Both are queued now, so whoever waits on the
        // chain after the stop (a reload) finds the start queued behind it.
        const without = new Set(ids(holds));
        const stopped = restart(without, { stopOnly: true });
        void restart(without);
        await stopped;
      },
      error: (err) =>
        log.warn(
          { error: withoutPassword((err as Error).message, pgConfig.url) },
          'fleet round failed; the next round tries again',
        ),
    },
  });

  const select = (set: RuleSet): RuleSet => {
    // While a bot starts its rules are loaded twice (the first may be empty, before the
    // participant's check): the keeper and `forward` learn the set once the start is through.
    if (starting) {
      startingIds = set.rules.map((r) => r.id);
      startingSet = set;
    } else {
      const ids = set.rules.map((r) => r.id);
      removed.changed(ruleIds, ids);
      ruleIds = ids;
      known = set;
      keeper.setRules(ruleIds);
    }
    return { ...set, rules: set.rules.filter((r) => owned.has(r.id)) };
  };

  /**
   * A rule's history in the fleet begins when the first member that knows it starts (at
   * `start:`, or where a single bot on the schema was) or reloads it in (at the ledger end then,
   * as a single bot's reload): its `rule:<id>` checkpoint row is recorded then, before this
   * member is ready and before it asks for the rule's lease. Without the row, the owner's bot
   * would begin at the ledger end of whenever it took the rule, skipping what came before.
   * Once this member runs, a rule without a row when its bot restarts is as new as a reloaded
   * one (its files changed, or it was forgotten: `RemovedRules`): it begins at the ledger end.
   */
  const origins = async (
    ledger: LedgerClient,
    when: 'start' | 'reload',
    ids: readonly string[] = startingIds,
  ): Promise<void> => {
    if (ids.length === 0) return;
    await removed.settled();
    const end = await ledger.ledgerEnd(
      options.signal === undefined ? {} : { signal: options.signal },
    );
    const first = when === 'start' && !joined;
    const offset = first ? startOffsetOf(config.start, undefined, end).offset : end;
    const recorded = await recordRuleOrigins(pool, pgConfig.schema, ids, offset, {
      takeDefault: first,
    });
    if (recorded.length > 0) {
      log.info({ rules: recorded, offset, when }, 'rules new to the fleet begin here');
    }
  };

  // A rule is running once its bot is: while the bot starts, an action on the rule is refused
  // by the bot or forwarded, so a client that waits for `running` can act on it at once.
  const status = (): Promise<Record<string, unknown>> => {
    const runs = running !== undefined && running.bot.state === 'running';
    const none = new Set<string>();
    return fleetStatus(leases, {
      fleet,
      instanceId,
      running: runs ? owned : none,
      starting: running === undefined ? owned : none,
      ruleIds,
    });
  };

  const startOne = async (rules: ReadonlySet<string>): Promise<void> => {
    owned = rules;
    stamped = new Map([...rules].map((id) => [id, keeper.generationOf(id) ?? 0]));
    const generations = stamped;
    starting = true;
    // Read before the bot starts, which pauses them before its stream opens: the events that
    // came while a rule was paused fleet-wide wait for its resume on every new owner too.
    const pausedAtStart = await requests.paused([...rules]);
    const bot = await startBot(config, logger, {
      ...options,
      fleet: {
        select,
        origins,
        pausedAtStart,
        // The lease the rule's state was loaded under, still held and within its time by this
        // member's clock: a member woken from a pause sends nothing of a rule it may have lost.
        maySubmit: (ruleId) => keeper.isValid({ ruleId, generation: generations.get(ruleId) ?? 0 }),
        // Read once the rows of rules new here are recorded (`origins`): the bot begins at the
        // lowest, and each rule evaluates only the events after its own.
        ruleCheckpoints: () => readRuleCheckpoints(pool, pgConfig.schema, [...rules]),
        store: {
          rules: [...rules],
          fence: leaseFence(keeper),
          holdsFor: (ruleIds) =>
            [...ruleIds].map((ruleId) => ({ ruleId, generation: generations.get(ruleId) ?? 0 })),
        },
        ops,
      },
    });
    starting = false;
    joined = true;
    removed.changed(ruleIds, startingIds);
    ruleIds = startingIds;
    known = startingSet;
    keeper.setRules(ruleIds);
    running = bot;
    log.info({ rules: [...rules].sort() }, 'running the rules this member owns');
    // Paused or resumed fleet-wide while the bot started, or a pause the start did not apply:
    // made true of the running bot now, not a round later when the forwarded request is claimed
    // (then a no-op: pause and resume are idempotent). Compared with the bot's own state, not
    // with what was read before the start, so nothing paused fleet-wide runs active here.
    const pausedNow = new Set(await requests.paused([...rules]));
    const states = new Map(bot.bot.ruleStatus().map((r) => [r.id, r.state]));
    for (const id of rules) {
      const state = states.get(id);
      if (pausedNow.has(id) && state === 'active') apply(bot, { kind: 'pause', ruleId: id });
      if (!pausedNow.has(id) && state === 'paused') apply(bot, { kind: 'resume', ruleId: id });
    }
    void bot.bot.done.then(() => botEnded(bot));
  };

  const ops: OpsFleet = {
    status,
    forward: async (request) => {
      if (!ruleIds.includes(request.ruleId)) return undefined;
      await requests.post(request, instanceId);
      const lease = (await leases.leases()).find((l) => l.ruleId === request.ruleId);
      return { owner: lease === undefined || lease.expired ? null : lease.owner };
    },
    rule: (ruleId) => known.rules.find((r) => r.id === ruleId),
    setPaused: (ruleId, paused) => requests.setPaused(ruleId, paused),
  };

  /** Carries out an operator's request on the bot running its rule (see carryOutFleetRequest). */
  const apply = (bot: RunningBot, request: FleetRequest): void => {
    void carryOutFleetRequest(bot, { request, again: false }, log);
  };

  const rounds = new FleetRequestRounds({
    requests,
    removed,
    instanceId,
    leasePeriodMs: fleet.leasePeriodMs,
    url: pgConfig.url,
    log,
    current: () => (running === undefined ? undefined : { bot: running, rules: owned }),
  });

  const botEnded = (bot: RunningBot): void => {
    if (closed || bot !== running) return; // stopped on purpose
    if (bot.bot.state === 'failed' && isFenced(bot.bot.error)) {
      log.warn({ error: (bot.bot.error as Error).message }, 'a commit was fenced; restarting');
      void restart(new Set(), { force: true });
      return;
    }
    fail(bot.bot.state === 'failed' ? bot.bot.error : new Error('the bot stopped by itself'));
  };

  /** Runs the rules held now (but `without`) in a new bot, when that differs from the running. */
  const restart = (
    without: ReadonlySet<string>,
    how: { readonly force?: boolean; readonly stopOnly?: boolean } = {},
  ): Promise<void> => {
    const step = chain.then(async () => {
      if (closed || failure !== undefined) return;
      if (how.stopOnly === true && ![...without].some((id) => owned.has(id))) return;
      if (leaving || how.stopOnly === true) {
        const old = running;
        running = undefined;
        owned = new Set();
        await old?.close();
        return;
      }
      const want = new Set(
        keeper
          .held()
          .map((h) => h.ruleId)
          .filter((id) => !without.has(id)),
      );
      const same =
        want.size === owned.size &&
        [...want].every((id) => owned.has(id) && stamped.get(id) === keeper.generationOf(id));
      if (same && how.force !== true && running !== undefined) return;
      const old = running;
      running = undefined;
      await old?.close();
      try {
        await startOne(want);
      } catch (err) {
        // Told to stop while a new bot was starting: that is the stop, not a failure.
        if (options.signal?.aborted === true || leaving) return;
        fail(err);
      }
    });
    chain = step;
    return step;
  };

  try {
    await refuseOtherFleet(leases, fleet, pgConfig);
    await startOne(new Set());
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  keeper.start();
  rounds.start();
  log.info(
    { instanceId, fleet: fleet.name, leasePeriodMs: fleet.leasePeriodMs, rules: ruleIds.length },
    'joined the fleet',
  );

  return {
    instanceId,
    current: () => running,
    done,
    failure: () => failure,
    reload: async () => {
      // Between two bots (a hand-on stops one, then starts the next): the one started next.
      const bot = await afterRestarts({
        running: () => running,
        chain: () => chain,
        ended: () => leaving || closed || failure !== undefined,
      });
      if (bot === undefined) throw new Error('the fleet member runs no bot');
      return bot.reload();
    },
    close: async () => {
      if (closed) return;
      leaving = true;
      rounds.stop();
      // The keeper's last `releasing` stops the bot with its writes committed, then it releases.
      await keeper
        .stop()
        .catch((err: unknown) =>
          log.warn(
            { error: withoutPassword((err as Error).message, pgConfig.url) },
            'leaving the fleet failed; the leases run out instead',
          ),
        );
      closed = true;
      await chain;
      await running?.close();
      running = undefined;
      await pool.end().catch(() => undefined);
    },
  };
}

function ids(holds: readonly LeaseHold[]): string[] {
  return holds.map((h) => h.ruleId);
}

function isFenced(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = e.cause) {
    if (e instanceof StoreError && e.code === 'STORE_FENCED') return true;
  }
  return false;
}
