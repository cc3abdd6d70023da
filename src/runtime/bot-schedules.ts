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
  readonly ledger: Partial<SlotLedger> & Pick<SlotLedger, 'ledgerEnd'>;
  readonly journal: SlotJournal;
  /** The bot's submission pipeline. */
  readonly sink: SlotIntentSink;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly options?: BotScheduleOptions;
};

/**
 * The schedule driver of a bot, or undefined when no enabled rule has a schedule. Slots record
 * their intents through the bot's pipeline (`sink`), so schedule intents get the same limits,
 * retries and dead letters as event rules.
 */
export function botSchedules(deps: BotSchedulesDeps): ScheduleDriver | undefined {
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
  return new ScheduleDriver({
    rules: scheduled,
    scheduler: options.scheduler ?? nodeCronSlotScheduler(logger),
    journal: deps.journal,
    clock: deps.clock,
    random: deps.random,
    logger,
    ...(options.onTimeMs === undefined ? {} : { onTimeMs: options.onTimeMs }),
    ...(options.retryDelayMs === undefined ? {} : { retryDelayMs: options.retryDelayMs }),
    runSlot: (rule, slot, signal) =>
      runSlot(rule, slot, {
        source,
        sink: deps.sink,
        journal: deps.journal,
        parties: deps.parties,
        signal,
        ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
      }),
  });
}
