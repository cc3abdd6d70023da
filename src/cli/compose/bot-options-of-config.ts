import type { BotOptions, BotSubmissionOptions } from '../../runtime/bot-options.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';

/**
 * What the composition root built for the bot from the config (see `startBot`): the options it
 * hands the bot as they are (`parties`: the config's aliases plus those an embedded sandbox
 * allocated; a logger always).
 */
export type BotParts = Required<
  Pick<BotOptions, 'rules' | 'parties' | 'ledger' | 'store' | 'logger' | 'packageNameOf'>
> & {
  /** The ledger is an embedded sandbox, which starts empty on every run. */
  readonly embedded: boolean;
};

/** `run`'s flags that reach the bot. */
export type BotRunFlags = {
  readonly shadow?: boolean;
  /** `run --reset-checkpoint`: begin at the config's `start`, not at the stored checkpoint. */
  readonly resetCheckpoint?: boolean;
};

/**
 * The `createBot` options of a loaded config: the config's numbers as they are (the config
 * loader filled its defaults from the same DEFAULTS table `compileBotOptions` reads), the
 * built parts, and the flags. Pure: it builds nothing and reads nothing.
 */
export function botOptionsOf(
  config: BotConfig,
  parts: BotParts,
  flags: BotRunFlags = {},
): BotOptions {
  return {
    rules: parts.rules,
    parties: parts.parties,
    packageNameOf: parts.packageNameOf,
    userId: config.ledger.userId,
    ledger: parts.ledger,
    store: parts.store,
    start: config.start,
    // An embedded sandbox starts empty on every run: a checkpoint of the last run's ledger
    // means nothing on it.
    resetCheckpoint: flags.resetCheckpoint === true || parts.embedded,
    submission: submissionOptionsOf(config),
    logger: parts.logger,
    shadow: flags.shadow === true,
    retentionMs: config.state.retentionMs,
  };
}

/** The config's `submission` as the bot takes it (its `retry` goes to the rules instead). */
export function submissionOptionsOf(config: BotConfig): BotSubmissionOptions {
  return {
    maxInFlight: config.submission.maxInFlight,
    completionTimeoutMs: config.submission.completionTimeoutMs,
    dedup: config.submission.dedup,
  };
}
