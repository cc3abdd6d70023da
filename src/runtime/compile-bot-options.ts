import type { BackoffPolicy } from '../core/backoff.js';
import { systemClock, type Clock } from '../core/clock.js';
import { DEFAULTS } from '../core/defaults.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { systemRandom, type Random } from '../core/random.js';
import type { RuleSet } from '../rules/compiled-rule.js';
import type { Store } from '../store/store.js';
import type { BotLedger } from './bot-ledger.js';
import type { BotOptions } from './bot-options.js';
import type { BotScheduleOptions } from './bot-schedules.js';
import type { DedupConfig, StartPosition } from './config/bot-config.js';

/** `BotOptions` with every default filled in (`compileBotOptions`); what the bot reads. */
export type CompiledBotOptions = {
  readonly rules: RuleSet;
  readonly parties: Readonly<Record<string, string>>;
  readonly userId: string;
  readonly ledger: BotLedger;
  readonly store: Store;
  readonly closeStore: boolean;
  readonly start: StartPosition;
  readonly resetCheckpoint: boolean;
  readonly submission: {
    readonly maxInFlight: number;
    readonly completionTimeoutMs: number;
    readonly dedup: DedupConfig;
  };
  readonly stopGraceMs: number;
  readonly restartBackoff: BackoffPolicy;
  /** Undefined: the client streams use their own default. */
  readonly streamBackoff: BackoffPolicy | undefined;
  readonly clock: Clock;
  readonly random: Random;
  /** The logger as given (the bot makes its `component` children). */
  readonly logger: Logger;
  readonly schedule: BotScheduleOptions & { readonly drive: boolean };
  readonly shadow: boolean;
  readonly retentionMs: number;
};

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
    userId: options.userId,
    ledger: options.ledger,
    store: options.store,
    closeStore: options.closeStore ?? true,
    start: options.start ?? { kind: DEFAULTS.start },
    resetCheckpoint: options.resetCheckpoint ?? false,
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
