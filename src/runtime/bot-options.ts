import type { BackoffPolicy } from '../core/backoff.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Random } from '../core/random.js';
import type { RuleSet } from '../rules/compiled-rule.js';
import type { Store } from '../store/store.js';
import type { BotLedger } from './bot-ledger.js';
import type { BotScheduleOptions } from './bot-schedules.js';
import type { DedupConfig, StartPosition } from './config/bot-config.js';

/**
 * How intents are submitted. Every field is optional; `compileBotOptions` fills the defaults from
 * `DEFAULTS.submission` (src/core/defaults.ts), the same numbers `ledgerbot run` uses.
 */
export type BotSubmissionOptions = {
  /**
   * Intents worked on at once over all rules.
   * @default 32
   */
  readonly maxInFlight?: number;
  /**
   * How long to wait for a completion before resubmitting, in ms.
   * @default 30000 (30 s)
   */
  readonly completionTimeoutMs?: number;
  /**
   * Anchor the dedup period at the justifying offset, or a fixed duration.
   * @default { mode: 'offset', fallbackMs: 86400000 } (the offset, falling back to 24 h)
   */
  readonly dedup?: DedupConfig;
};

export type BotOptions = {
  /** The compiled rules (`loadRules`). */
  readonly rules: RuleSet;
  /** Party alias → party id. */
  readonly parties: Readonly<Record<string, string>>;
  /**
   * The name of the package with this id (`PackageCatalogue.packageNameOf`): events carry
   * package-id interface ids, rules `#name` references, and this matches one to the other. It
   * is asked at every event, so it may follow a catalogue that changes (`ledgerbot run` passes
   * the one its reloads read).
   * @default none: an interface rule matches an interface by `Module:Entity` alone
   */
  readonly packageNameOf?: (packageId: string) => string | undefined;
  /** The Ledger API user the bot submits as; part of every change id. */
  readonly userId: string;
  /** Usually the LedgerClient. The bot does not close it. */
  readonly ledger: BotLedger;
  readonly store: Store;
  /**
   * Close the store on stop.
   * @default true
   */
  readonly closeStore?: boolean;
  /**
   * Where a bot begins. With a checkpoint the bot resumes from it, whatever `start` says, unless
   * `resetCheckpoint`; `checkpoint` without one begins at the ledger end.
   * @default { kind: 'checkpoint' }
   */
  readonly start?: StartPosition;
  /**
   * Ignore the stored checkpoint and begin at `start` (`run --reset-checkpoint`); the new
   * position is stored at once. Events already in the journal are not submitted again.
   * @default false
   */
  readonly resetCheckpoint?: boolean;
  /**
   * Rules paused from the start: paused at the offset the bot begins from (its stored
   * checkpoint) before the updates stream opens, so none of their events is evaluated until
   * `resumeRule`, which replays them as after any pause. A fleet member passes the rules paused
   * fleet-wide. Ids of rules the bot does not run, or runs disabled, are ignored.
   * @default none
   */
  readonly pausedAtStart?: readonly string[];
  /**
   * Each rule's own checkpoint, read as the bot starts (a fleet member's `rule:<id>` rows: its
   * store's checkpoint is the lowest of them). The bot begins at its store's checkpoint, and a
   * rule does not evaluate the events at or below its own, so a rule whose history begins
   * further on (new to the fleet, or added back by a reload) acts on nothing before it.
   * @default none: every rule from the store's checkpoint
   */
  readonly ruleCheckpoints?: () => Promise<ReadonlyMap<string, number>>;
  /**
   * Asked right before each submission is sent, once its attempt is journalled: false holds it
   * unsent, and the intent is attempted again after `submission.completionTimeoutMs`, as when no
   * completion comes. A fleet member answers whether it still holds the rule's lease by its own
   * clock, so a member woken from a pause does not send an intent of a rule another member may
   * own by then.
   * @default always true
   */
  readonly maySubmit?: (ruleId: string) => boolean;
  readonly submission?: BotSubmissionOptions;
  /**
   * How long `stop()` waits for submissions already out, in ms.
   * @default 10000 (10 s)
   */
  readonly stopGraceMs?: number;
  /**
   * Backoff between restarts of a stream after an auth failure (and between tries of a pruning
   * recovery or of a resumed rule's replay).
   * @default { initialMs: 1000, maxMs: 60000 } (1 s doubling to 1 min)
   */
  readonly restartBackoff?: BackoffPolicy;
  /**
   * Websocket reconnect backoff, passed to the client streams.
   * @default the client's own (`DEFAULT_STREAM_BACKOFF`)
   */
  readonly streamBackoff?: BackoffPolicy;
  /** @default systemClock */
  readonly clock?: Clock;
  /** @default systemRandom */
  readonly random?: Random;
  /** @default silentLogger */
  readonly logger?: Logger;
  /**
   * Schedule rules: the scheduler, the snapshot source, or `drive: false` to run no slots.
   * @default node-cron, the bot's ledger, `drive: true`
   */
  readonly schedule?: BotScheduleOptions & { readonly drive?: boolean };
  /**
   * Shadow mode: read and evaluate, log the intents, submit nothing and write nothing to the
   * store (no journal, no checkpoint, no slot records), so a later real run is unaffected.
   * Schedule rules do not run (use `run-slot --dry-run`).
   * @default false
   */
  readonly shadow?: boolean;
  /**
   * How long finished intents stay in the journal (`state.retention`), in ms; the bot compacts
   * it while it runs.
   * @default 604800000 (7 days)
   */
  readonly retentionMs?: number;
};
