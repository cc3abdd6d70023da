import { AbortError } from '../core/abort-error.js';
import type { Clock } from '../core/clock.js';
import type { Random } from '../core/random.js';
import type { Store } from '../store/store.js';
import type { BotLedger } from './bot-ledger.js';
import type { BotMetrics } from './bot-metrics.js';
import type { InFlightIntents } from './in-flight-intents.js';
import { exhausted, type GiveUpReason } from './retry-schedule.js';
import { buildSubmission, type SubmissionPayload } from './submission-payload.js';
import type { TokenBucket } from './token-bucket.js';
import type { TrackedIntent } from './tracked-intent.js';

export type SendAttemptDeps = {
  readonly ledger: Pick<BotLedger, 'submit'>;
  readonly store: Pick<Store, 'sync'>;
  readonly clock: Clock;
  readonly random: Random;
  readonly metrics: BotMetrics;
  readonly intents: InFlightIntents;
  readonly rateLimiter: (ruleId: string, payload: SubmissionPayload) => TokenBucket;
  /** Aborted when the tracker closes: cancels rate-limit waits and the submit call. */
  readonly signal: AbortSignal;
  /** Whether the tracker stopped starting attempts (drain or close). */
  readonly closing: () => boolean;
  /** See BotOptions.maySubmit: false holds the journalled attempt unsent. */
  readonly maySubmit?: (ruleId: string) => boolean;
};

/**
 * - `sent`: the participant accepted the submission; its completion decides;
 * - `failed`: the participant (or the transport) refused it with `error`;
 *   (`seq`: the intent's seq of the attempt, to tell whether it moved on since)
 * - `held`: journalled, but not sent: `maySubmit` said no (a fleet member's lease of the rule
 *   may have run out); the tracker waits as for a completion, then tries again;
 * - `give-up`: the intent's bounds are spent before the attempt;
 * - `stopped`: nothing more to do here: the tracker is closing, the intent moved on meanwhile
 *   (a completion settled it), or the journal refused the attempt (the intent was dropped).
 */
export type AttemptOutcome =
  | { readonly kind: 'sent'; readonly seq: number }
  | { readonly kind: 'held'; readonly seq: number }
  | { readonly kind: 'failed'; readonly error: unknown; readonly seq: number }
  | { readonly kind: 'give-up'; readonly reason: GiveUpReason }
  | { readonly kind: 'stopped' };

/**
 * One attempt of an intent: wait for the rule's rate limit, record `submitted` with a fresh
 * submissionId (write-ahead: the journal knows about the attempt before the participant does),
 * then submit with the intent's dedup period.
 */
export async function sendAttempt(d: SendAttemptDeps, t: TrackedIntent): Promise<AttemptOutcome> {
  const stopped = { kind: 'stopped' } as const;
  if (d.closing() || !d.intents.has(t.commandId)) return stopped;
  const giveUp = exhausted({ record: t.record, retry: t.record.payload.retry }, d.clock.now());
  if (giveUp !== undefined) return { kind: 'give-up', reason: giveUp };
  const seq = ++t.seq;
  const stale = (): boolean => t.seq !== seq || !d.intents.has(t.commandId);
  t.phase = 'throttled';
  try {
    await d.rateLimiter(t.record.ruleId, t.record.payload).take(d.signal);
  } catch {
    return stopped; // closing
  }
  if (t.seq !== seq || d.closing()) return stopped;
  const submissionId = d.random.uuid();
  t.submissionId = submissionId;
  t.acceptAny = false;
  if (!d.intents.transition(t, { to: 'submitted', submissionId })) return stopped;
  t.phase = 'submitting';
  // With group commit the attempt is committed with the rest of this turn's changes: one
  // commit for every submission made in the turn.
  try {
    await d.store.sync();
  } catch (err) {
    d.intents.dropUnrecorded(t, 'submitted', err);
    return stopped;
  }
  if (stale()) return stopped;
  // Asked after the commit, so a process paused during it asks once it wakes, just before sending.
  if (d.maySubmit?.(t.record.ruleId) === false) return { kind: 'held', seq };
  const body = buildSubmission(t.record.payload, {
    commandId: t.commandId,
    userId: t.record.userId,
    submissionId,
    dedup: t.dedup,
    nowMs: d.clock.now(),
  });
  d.metrics.submissions += 1;
  try {
    await d.ledger.submit(body, { signal: d.signal });
  } catch (err) {
    if (stale()) return stopped;
    if (err instanceof AbortError && d.signal.aborted) return stopped;
    return { kind: 'failed', error: err, seq };
  }
  return stale() ? stopped : { kind: 'sent', seq }; // stale: the completion came first
}
