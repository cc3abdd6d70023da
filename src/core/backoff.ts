import type { Random } from './random.js';

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
