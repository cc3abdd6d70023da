import { backoffDelay } from '../core/backoff.js';
import type { Random } from '../core/random.js';
import { retryDelayHintMs } from '../ledger/classify.js';
import type { IntentRecord } from '../store/store.js';
import type { SubmissionPayload } from './submission-payload.js';

/** Why an intent was dead-lettered or rejected, recorded with its last error. */
export type GiveUpReason =
  | 'final'
  | 'max-attempts'
  | 'deadline'
  | 'not-needed'
  | 'bad-payload'
  /** LEDGER_API_INTERNAL_ERROR on every try: the participant cannot transcode the values. */
  | 'unreadable-values';

type Bounds = {
  readonly record: Pick<IntentRecord, 'attempts' | 'deadline'>;
  readonly retry: SubmissionPayload['retry'];
};

/** Whether an attempt at `at` would break the intent's bounds: its attempts or its deadline. */
export function exhausted({ record, retry }: Bounds, at: number): GiveUpReason | undefined {
  if (record.attempts >= retry.maxAttempts) return 'max-attempts';
  if (record.deadline !== undefined && at >= record.deadline) return 'deadline';
  return undefined;
}

export type NextAttempt =
  | { readonly kind: 'give-up'; readonly reason: GiveUpReason }
  | { readonly kind: 'retry'; readonly delayMs: number; readonly at: number };

/**
 * When to try a failed intent again: jittered exponential backoff over the attempts made so far
 * (never sooner than the participant asks), unless that breaks the intent's bounds.
 * `delayOverrideMs` replaces the backoff (0: at once, e.g. after changing the dedup period).
 */
export function nextAttempt(
  bounds: Bounds & { readonly err: unknown; readonly delayOverrideMs?: number | undefined },
  now: number,
  random: Random,
): NextAttempt {
  const { record, retry } = bounds;
  if (record.attempts >= retry.maxAttempts) return { kind: 'give-up', reason: 'max-attempts' };
  const delayMs =
    bounds.delayOverrideMs ??
    Math.max(
      backoffDelay(
        { initialMs: retry.initialDelayMs, maxMs: retry.maxDelayMs },
        Math.max(0, record.attempts - 1),
        random,
      ),
      retryDelayHintMs(bounds.err) ?? 0,
    );
  const at = now + delayMs;
  const reason = exhausted(bounds, at);
  return reason === undefined ? { kind: 'retry', delayMs, at } : { kind: 'give-up', reason };
}
