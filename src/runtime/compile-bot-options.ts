import type { BackoffPolicy } from '../core/backoff.js';
import { systemClock } from '../core/clock.js';
import { DEFAULTS } from '../core/defaults.js';
import { silentLogger } from '../core/logger.js';
import { systemRandom } from '../core/random.js';
import type { BotOptions, BotSubmissionOptions } from './bot-options.js';
import type { BotScheduleOptions } from './bot-schedules.js';

/** Every optional field of `T` present, with no `undefined`. */
type Filled<T> = { readonly [K in keyof T]-?: Exclude<T[K], undefined> };

/** `BotOptions` with every default filled in (`compileBotOptions`); what the bot reads. */
export type CompiledBotOptions = Filled<
  Omit<BotOptions, 'submission' | 'streamBackoff' | 'schedule'>
> & {
  readonly submission: Filled<BotSubmissionOptions>;
  /** Undefined: the client streams use their own default. */
  readonly streamBackoff: BackoffPolicy | undefined;
  readonly schedule: BotScheduleOptions & { readonly drive: boolean };
};

/** `maySubmit`'s default: one function, so two compiled options without it compare equal. */
const alwaysSubmit = (): boolean => true;
/** `ruleCheckpoints`'s default, one function for the same reason. */
const noRuleCheckpoints = (): Promise<ReadonlyMap<string, number>> => Promise.resolve(new Map());

/**
 * Fills every option `createBot` leaves out from `DEFAULTS` (src/core/defaults.ts), the table
 * `ledgerbot run` reads too, so a library user who leaves an option out and a config file with
 * an empty section get the same bot. Does no I/O and validates nothing the rules' compile did.
 */
export function compileBotOptions(options: BotOptions): CompiledBotOptions {
  const submission = options.submission ?? {};
  const { drive, ...schedule } = options.schedule ?? {};
  return {
    rules: options.rules,
    parties: options.parties,
    packageNameOf: options.packageNameOf ?? (() => undefined),
    userId: options.userId,
    ledger: options.ledger,
    store: options.store,
    closeStore: options.closeStore ?? true,
    start: options.start ?? { kind: DEFAULTS.start },
    resetCheckpoint: options.resetCheckpoint ?? false,
    pausedAtStart: options.pausedAtStart ?? [],
    maySubmit: options.maySubmit ?? alwaysSubmit,
    ruleCheckpoints: options.ruleCheckpoints ?? noRuleCheckpoints,
    submission: {
      maxInFlight: submission.maxInFlight ?? DEFAULTS.submission.maxInFlight,
      completionTimeoutMs:
        submission.completionTimeoutMs ?? DEFAULTS.submission.completionTimeoutMs,
      dedup: submission.dedup ?? {
        mode: 'offset',
        fallbackMs: DEFAULTS.submission.dedupFallbackMs,
      },
    },
    stopGraceMs: options.stopGraceMs ?? DEFAULTS.stopGraceMs,
    restartBackoff: options.restartBackoff ?? { ...DEFAULTS.restartBackoff },
    streamBackoff: options.streamBackoff,
    clock: options.clock ?? systemClock,
    random: options.random ?? systemRandom,
    logger: options.logger ?? silentLogger,
    schedule: { ...schedule, drive: drive ?? true },
    shadow: options.shadow ?? false,
    retentionMs: options.retentionMs ?? DEFAULTS.retentionMs,
  };
}
