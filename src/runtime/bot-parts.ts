import type { Logger } from '../core/logger.js';
import type { BotEvents, BotState } from './bot-events.js';
import type { BotMetrics } from './bot-metrics.js';
import { SwappableSchedules } from './bot-schedules.js';
import { Checkpoint } from './checkpoint.js';
import type { CompiledBotOptions } from './compile-bot-options.js';
import type { IntentEvent } from './in-flight-intents.js';
import type { IntentPipeline } from './intent-pipeline.js';
import { journalSide, type JournalSide } from './journal-side.js';
import { PruneRecovery } from './prune-recovery.js';
import { RuleBook } from './rule-book.js';
import { RuleControl } from './rule-control.js';
import { ShadowPipeline } from './shadow-pipeline.js';
import { decodedJournal } from './submission-payload.js';
import { RateLimits } from './token-bucket.js';
import { TransactionIngest } from './transaction-ingest.js';
import { UpdateFollower } from './update-follower.js';

/** What a bot is made of; the bot runs their lifecycle (bot.ts). */
export type BotParts = {
  readonly book: RuleBook;
  readonly checkpoint: Checkpoint;
  readonly rateLimits: RateLimits;
  readonly pipeline: IntentPipeline;
  /** The submission side; undefined for a shadow bot, which submits and writes nothing. */
  readonly journal: JournalSide | undefined;
  readonly updates: UpdateFollower;
  readonly control: RuleControl;
  readonly schedules: SwappableSchedules;
};

/** What the parts take from the bot that holds them. */
export type BotPartsDeps = {
  readonly metrics: BotMetrics;
  readonly events: BotEvents;
  /** The bot's own logger (`component: 'runtime'`). */
  readonly logger: Logger;
  /** Aborts intake: the updates stream, replays and waits for admission. */
  readonly intake: AbortSignal;
  /** Aborts the completions stream, after the drain. */
  readonly completionsStop: AbortSignal;
  readonly state: () => BotState;
  readonly onIntent: (event: IntentEvent) => void;
  readonly assertRunning: (action: string) => void;
  readonly fail: (err: unknown) => void;
};

/**
 * Builds the parts of a bot and connects them: the rule book, the checkpoint, the intent
 * pipeline (journal or shadow), the update follower with its pruning recovery, rule control and
 * the schedules. Does no I/O.
 */
export function botParts(o: CompiledBotOptions, d: BotPartsDeps): BotParts {
  const { metrics, events, logger } = d;
  const signal = d.intake;
  const book = new RuleBook(o.rules, o.parties);
  // Wrapped once: behind this, a payload is a field read (checked as its row was read).
  const journal = decodedJournal(o.store);
  const checkpoint = new Checkpoint({
    store: journal,
    writes: !o.shadow,
    logger,
    heldAt: () => book.heldAt(),
  });
  const rateLimits = new RateLimits(o.clock, (id) => book.find(id)?.options.rateLimit);
  const { clock, random, ledger, parties, restartBackoff, streamBackoff } = o;
  const follower = { ledger, clock, random, restartBackoff, streamBackoff, logger, metrics };
  let side: JournalSide | undefined;
  let pipeline: IntentPipeline;
  if (o.shadow) {
    pipeline = new ShadowPipeline({ metrics, logger, events });
  } else {
    side = journalSide({
      options: o,
      journal,
      clock,
      logger,
      metrics,
      checkpoint,
      rateLimits,
      intake: signal,
      completionsStop: d.completionsStop,
      onIntent: d.onIntent,
      assertRunning: d.assertRunning,
    });
    pipeline = side.pipeline;
  }
  const { packageNameOf } = o;
  const ingest = new TransactionIngest({
    parties,
    packageNameOf,
    clock,
    metrics,
    logger,
    events,
    pipeline,
  });
  const recovery = new PruneRecovery({
    ...follower,
    parties,
    journal,
    signal,
    liveRules: () => book.liveRules(),
    index: (offset) => book.indexAt(offset),
    ingest,
    checkpoint,
  });
  const updates = new UpdateFollower({
    ...follower,
    signal,
    events,
    plan: () => book.plan,
    index: (offset) => book.indexAt(offset),
    ingest,
    checkpoint,
    recover: (from, err) => recovery.recover(from, err),
  });
  const control = new RuleControl({
    ...follower,
    parties,
    book,
    checkpoint,
    state: d.state,
    ingest,
    signal,
    events,
    fail: d.fail,
  });
  const schedules = new SwappableSchedules({
    ...follower,
    parties,
    packageNameOf,
    journal,
    sink: pipeline,
    logger: o.logger,
    rules: o.rules,
    // A shadow bot runs no slots (`run-slot --dry-run` shows what one would do).
    drive: o.schedule.drive && !o.shadow,
    options: o.schedule,
    // Resuming counts as active: the slots missed while paused go to the misfire policy then.
    paused: (id) => book.pauseOf(id)?.resuming === false,
    live: () => d.state() === 'running' || d.state() === 'starting',
    fail: d.fail,
  });
  return { book, checkpoint, rateLimits, pipeline, journal: side, updates, control, schedules };
}
