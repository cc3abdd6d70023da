import type { Random } from './random.js';

/**
 * The backoff delays of ledgerbot, with the injected Random, for waits on the injected Clock.
 *
 * There is one way to retry a loop: the runtime's `retryOnClock` (src/runtime/retry-on-clock.ts)
 * runs the attempts with p-retry (abort signal, which failures retry) and takes its waits from
 * `backoffDelay`, slept on the Clock. p-retry's own wait would use Math.random and real timers,
 * which neither a FakeClock nor a SeededRandom can drive, so its delay is 0 there. The bot's
 * stream restarts after auth failures, its pruning recovery and a resumed rule's replay use it.
 *
 * `backoffDelay` is used directly only where a retry is not a loop p-retry can run:
 * - the submission tracker (src/runtime/retry-schedule.ts): an intent's next attempt is a timer
 *   on the Clock, decided per failure from the journal's attempt count, bounded by the rule's
 *   deadline and never sooner than the participant's retry hint; the attempts outlive the call;
 * - the websocket streams (src/ledger/ws/resumable-stream.ts): a reconnect resumes the same
 *   iterator mid-stream, honours the server's retry hint, and resets the backoff after a stable
 *   connection (`backoffCeiling`);
 * - `awaitParticipant` (src/runtime/await-participant.ts): the wait is capped by a deadline and
 *   each attempt's verdict decides between retrying and a typed error.
 */

export type BackoffPolicy = {
  readonly initialMs: number;
  readonly maxMs: number;
  readonly multiplier?: number;
};

/**
 * Exponential backoff with "equal jitter": half the capped delay is fixed and half is random,
 * so reconnecting clients spread out but never retry immediately. `attempt` counts from 0.
 */
export function backoffDelay(policy: BackoffPolicy, attempt: number, random: Random): number {
  const capped = backoffCeiling(policy, attempt);
  return Math.round(capped / 2 + random.next() * (capped / 2));
}

/** The longest delay `backoffDelay` can give for `attempt` (before jitter). */
export function backoffCeiling(policy: BackoffPolicy, attempt: number): number {
  return Math.min(policy.maxMs, policy.initialMs * (policy.multiplier ?? 2) ** attempt);
}
