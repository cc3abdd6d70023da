import type { Clock } from '../../core/clock.js';
import { TERMINAL_STATES } from '../../store/store.js';
import type { Bot } from '../bot.js';
import type { IntentEvent } from '../in-flight-intents.js';

/** Seconds per bucket of `/status`'s `rate`. */
export const RATE_BUCKET_SECONDS = 5;
/** Buckets kept: 5 minutes. */
export const RATE_BUCKETS = 60;

/** `/status`'s `rate`: submissions and intents completed per bucket, oldest first. */
export type SubmissionRateView = {
  readonly bucketSeconds: number;
  readonly submitted: number[];
  readonly completed: number[];
};

export type SubmissionRate = {
  view(): SubmissionRateView;
  close(): void;
};

/**
 * Counts the bot's submissions (`→ submitted`) and completions (an intent turning terminal) in
 * buckets of 5 s over the last 5 minutes, from its intent events: no timer runs.
 */
export function submissionRate(bot: Bot, clock: Clock): SubmissionRate {
  const bucketMs = RATE_BUCKET_SECONDS * 1000;
  // Ring of the last RATE_BUCKETS buckets, by bucket number modulo RATE_BUCKETS.
  const submitted = new Array<number>(RATE_BUCKETS).fill(0);
  const completed = new Array<number>(RATE_BUCKETS).fill(0);
  let newest = Math.floor(clock.now() / bucketMs);
  /** Moves the ring to the current bucket, zeroing the buckets passed over. */
  const advance = (): number => {
    const current = Math.floor(clock.now() / bucketMs);
    for (let b = newest + 1; b <= Math.min(current, newest + RATE_BUCKETS); b++) {
      submitted[b % RATE_BUCKETS] = 0;
      completed[b % RATE_BUCKETS] = 0;
    }
    newest = Math.max(newest, current);
    return newest % RATE_BUCKETS;
  };
  const onIntent = (e: IntentEvent): void => {
    if (e.to === 'submitted') submitted[advance()]! += 1;
    else if (TERMINAL_STATES.has(e.to)) completed[advance()]! += 1;
  };
  bot.events.on('intent', onIntent);
  const inOrder = (ring: number[]): number[] => {
    const out: number[] = [];
    for (let b = newest - RATE_BUCKETS + 1; b <= newest; b++) out.push(ring[b % RATE_BUCKETS]!);
    return out;
  };
  return {
    view: () => {
      advance();
      return {
        bucketSeconds: RATE_BUCKET_SECONDS,
        submitted: inOrder(submitted),
        completed: inOrder(completed),
      };
    },
    close: () => {
      bot.events.off('intent', onIntent);
    },
  };
}
