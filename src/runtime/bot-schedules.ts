import { AbortError } from '../core/abort-error.js';
import type { Clock } from '../core/clock.js';
import { IllegalStateError } from '../core/illegal-state-error.js';
import type { Logger } from '../core/logger.js';
import type { Random } from '../core/random.js';
import type { RuleSet } from '../rules/compiled-rule.js';
import { nodeCronSlotScheduler } from '../schedule/node-cron-slot-scheduler.js';
import {
  runSlot,
  type SlotIntentSink,
  type SlotJournal,
  type SlotSnapshotSource,
} from '../schedule/run-slot.js';
import { ScheduleDriver } from '../schedule/schedule-driver.js';
import { errorFields } from './error-record.js';
import type { SlotScheduler } from '../schedule/slot-scheduler.js';
import {
  ledgerSlotSource,
  type LedgerSlotSourceOptions,
  type SlotLedger,
} from './ledger-slot-source.js';

/** How the bot runs its schedule rules. Every field is optional. */
export type BotScheduleOptions = LedgerSlotSourceOptions & {
  /** What wakes the driver; default node-cron (tests pass `clockSlotScheduler(fakeClock)`). */
  readonly scheduler?: SlotScheduler;
  /** Where slots read their snapshot; default the bot's ledger (needs `activeContracts`). */
  readonly source?: SlotSnapshotSource;
  /** Intents handed to the pipeline at once per slot (default 100). */
  readonly batchSize?: number;
  /** See `slotsToRun` (default 60 s). */
  readonly onTimeMs?: number;
  /** After a failed slot, try again this much later (default 30 s). */
  readonly retryDelayMs?: number;
};

export type BotSchedulesDeps = {
  readonly rules: RuleSet;
  readonly parties: Readonly<Record<string, string>>;
  /** See BotOptions.packageNameOf: a forEach over an interface finds its view with it. */
  readonly packageNameOf?: (packageId: string) => string | undefined;
  readonly ledger: Partial<SlotLedger> & Pick<SlotLedger, 'ledgerEnd'>;
  readonly journal: SlotJournal;
  /** The bot's submission pipeline. */
  readonly sink: SlotIntentSink;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly options?: BotScheduleOptions;
  /** Whether a rule is paused: it fires no slot then (see ScheduleDriverOptions.paused). */
  readonly paused?: (ruleId: string) => boolean;
  /** Fails the bot: a slot's intents could not be recorded (see the sink in botSchedules). */
  readonly fail?: (err: unknown) => void;
};

/**
 * The schedule driver of a bot, or undefined when no enabled rule has a schedule. Slots record
 * their intents through the bot's pipeline (`sink`), so schedule intents get the same limits,
 * retries and dead letters as event rules.
 */
function botSchedules(deps: BotSchedulesDeps): ScheduleDriver | undefined {
  const scheduled = deps.rules.rules.filter((r) => r.enabled && r.trigger.kind === 'schedule');
  if (scheduled.length === 0) return undefined;
  const options = deps.options ?? {};
  const logger = deps.logger.child({ component: 'schedule' });
  const source =
    options.source ??
    ledgerSlotSource(
      {
        ledgerEnd: (o) => deps.ledger.ledgerEnd(o),
        activeContracts: (request, o) => {
          if (deps.ledger.activeContracts === undefined) {
            throw new IllegalStateError(
              'forEach schedule rules need a ledger with activeContracts (pass the LedgerClient, or schedule.source)',
            );
          }
          return deps.ledger.activeContracts(request, o);
        },
      },
      options,
    );
  // An intent the pipeline cannot record (a failed commit, a store that refuses writes from now
  // on, a lost fleet lease) fails the bot, as on the event path: a slot retried against it
  // could never succeed, and a bot that goes on reporting ready is never restarted. A slot whose
  // ledger read fails is retried by the driver.
  const sink: SlotIntentSink = {
    submitIntents: (intents, context) =>
      deps.sink.submitIntents(intents, context).catch((err: unknown) => {
        if (!(err instanceof AbortError)) deps.fail?.(err);
        throw err;
      }),
  };
  return new ScheduleDriver({
    rules: scheduled,
    scheduler: options.scheduler ?? nodeCronSlotScheduler(logger),
    journal: deps.journal,
    clock: deps.clock,
    random: deps.random,
    logger,
    ...(options.onTimeMs === undefined ? {} : { onTimeMs: options.onTimeMs }),
    ...(options.retryDelayMs === undefined ? {} : { retryDelayMs: options.retryDelayMs }),
    ...(deps.paused === undefined ? {} : { paused: deps.paused }),
    runSlot: (rule, slot, signal) =>
      runSlot(rule, slot, {
        source,
        sink,
        journal: deps.journal,
        parties: deps.parties,
        ...(deps.packageNameOf === undefined ? {} : { packageNameOf: deps.packageNameOf }),
        signal,
        ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
      }),
  });
}

export type SwappableSchedulesDeps = Omit<BotSchedulesDeps, 'rules'> & {
  /** The rules at creation. */
  readonly rules: RuleSet;
  /** False: no driver, whatever the rules (`schedule.drive: false`, or a shadow bot). */
  readonly drive: boolean;
  /** Whether the bot is starting or running (a swap that ends later starts nothing). */
  readonly live: () => boolean;
};

/**
 * The bot's schedule driver across reloads: a reload with other schedule rules stops the running
 * driver and starts one for the new rules, one swap at a time.
 */
export class SwappableSchedules {
  readonly #d: SwappableSchedulesDeps;
  #driver: ScheduleDriver | undefined;
  /** Serialises the swaps. */
  #swap: Promise<void> = Promise.resolve();

  constructor(deps: SwappableSchedulesDeps) {
    this.#d = deps;
    this.#driver = this.#make(deps.rules);
  }

  get driver(): ScheduleDriver | undefined {
    return this.#driver;
  }

  start(): void {
    this.#driver?.start();
  }

  /** A paused rule may fire again (see ScheduleDriver.resumed). */
  resumed(ruleId: string): void {
    this.#driver?.resumed(ruleId);
  }

  /** Waits for a swap under way, then stops the driver. */
  async stop(): Promise<void> {
    await this.#swap;
    await this.#driver?.stop();
  }

  /** Puts the schedule rules of `rules` in effect: swapped while live, else just replaced. */
  swap(rules: RuleSet): void {
    if (!this.#d.live()) {
      this.#driver = this.#make(rules);
      return;
    }
    const logger = this.#d.logger.child({ component: 'runtime' });
    this.#swap = this.#swap
      .then(async () => {
        await this.#driver?.stop();
        if (!this.#d.live()) return;
        this.#driver = this.#make(rules);
        this.#driver?.start();
        logger.info({ schedules: this.#driver === undefined ? 0 : 1 }, 'schedules swapped');
      })
      .catch((err: unknown) => {
        logger.error({ ...errorFields(err) }, 'cannot restart the schedule driver');
      });
  }

  #make(rules: RuleSet): ScheduleDriver | undefined {
    return this.#d.drive ? botSchedules({ ...this.#d, rules }) : undefined;
  }
}
