import type { Store } from '../store/store.js';
import { Admission } from './admission.js';
import type { CompiledBotOptions } from './compile-bot-options.js';
import { CompletionFollower } from './completion-follower.js';
import { JournalPipeline, type JournalPipelineDeps } from './intent-pipeline.js';
import { JournalCompactor } from './journal-compactor.js';
import type { JournalPayload } from './submission-payload.js';
import { SubmissionTracker } from './submission-tracker.js';
import type { RateLimits } from './token-bucket.js';

/** What a real (not shadow) bot has for submitting: all of it writes to the journal. */
export type JournalSide = {
  readonly pipeline: JournalPipeline;
  readonly tracker: SubmissionTracker;
  readonly completions: CompletionFollower;
  readonly compactor: JournalCompactor;
};

/** The pipeline's own deps, which the side hands on (and its other parts share), plus the rest. */
export type JournalSideDeps = Pick<
  JournalPipelineDeps,
  'clock' | 'logger' | 'metrics' | 'checkpoint' | 'intake' | 'onIntent' | 'assertRunning'
> & {
  readonly options: CompiledBotOptions;
  /**
   * `options.store` with its payloads decoded as rows are read (`decodedJournal`): the caller
   * wraps it once and hands the same view to all its parts, so no row is decoded twice.
   */
  readonly journal: Store<JournalPayload>;
  readonly rateLimits: RateLimits;
  /** Aborts the completions stream, after the drain. */
  readonly completionsStop: AbortSignal;
};

/**
 * The submission side of a bot: the journal pipeline (record, then admit) in front of the
 * tracker (attempts, retries, dead letters), the completions that settle the tracker's intents,
 * and the journal's compaction.
 */
export function journalSide(d: JournalSideDeps): JournalSide {
  const o = d.options;
  const { clock, logger, metrics } = d;
  const journal = d.journal;
  const tracker = new SubmissionTracker({
    ledger: o.ledger,
    store: journal,
    clock,
    random: o.random,
    userId: o.userId,
    completionTimeoutMs: o.submission.completionTimeoutMs,
    dedup: o.submission.dedup,
    logger,
    metrics,
    rateLimiter: (ruleId, payload) => d.rateLimits.bucket(ruleId, payload.rateLimit),
    maySubmit: o.maySubmit,
    onIntent: d.onIntent,
  });
  const pipeline = new JournalPipeline({
    store: journal,
    clock,
    userId: o.userId,
    checkpoint: d.checkpoint,
    admission: new Admission(o.submission.maxInFlight),
    tracker,
    metrics,
    logger,
    intake: d.intake,
    onIntent: d.onIntent,
    assertRunning: d.assertRunning,
  });
  const completions = new CompletionFollower({
    ledger: o.ledger,
    userId: o.userId,
    clock,
    random: o.random,
    restartBackoff: o.restartBackoff,
    streamBackoff: o.streamBackoff,
    logger,
    metrics,
    signal: d.completionsStop,
    tracker,
  });
  const compactor = new JournalCompactor({
    store: journal,
    clock,
    retentionMs: o.retentionMs,
    logger,
    onCompacted: (deleted) => (metrics.compactedIntents += deleted),
  });
  return { pipeline, tracker, completions, compactor };
}
