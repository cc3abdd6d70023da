import { throwIfAborted } from '../core/abort-error.js';
import type { Clock } from '../core/clock.js';
import type { RateLimitOptions } from '../rules/rule-options.js';

/**
 * A token bucket on the injected clock: `burst` tokens, refilled at `perSecond`. `take` waits
 * (on the clock, so tests advance a FakeClock) until a token is there.
 */
export class TokenBucket {
  readonly #clock: Clock;
  readonly #perSecond: number;
  readonly #burst: number;
  #tokens: number;
  #refilledAt: number;
  /** Waiters in arrival order, so a steady stream of takers cannot starve an early one. */
  #queue: Promise<void> = Promise.resolve();

  constructor(clock: Clock, perSecond: number, burst: number) {
    this.#clock = clock;
    this.#perSecond = perSecond;
    this.#burst = Math.max(1, burst);
    this.#tokens = this.#burst;
    this.#refilledAt = clock.now();
  }

  /** Tokens available now (fractional). */
  get available(): number {
    this.#refill();
    return this.#tokens;
  }

  /** Takes a token if one is there; never waits. */
  tryTake(): boolean {
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Takes one token, waiting for it if needed. Rejects with AbortError when `signal` aborts. */
  take(signal?: AbortSignal): Promise<void> {
    const turn = this.#queue.then(() => this.#takeNow(signal));
    // The next waiter starts after this one, whether it got its token or was aborted.
    this.#queue = turn.catch(() => undefined);
    return turn;
  }

  async #takeNow(signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      throwIfAborted(signal);
      if (this.tryTake()) return;
      const waitMs = Math.ceil(((1 - this.#tokens) / this.#perSecond) * 1000);
      await this.#clock.sleep(Math.max(1, waitMs), signal);
    }
  }

  #refill(): void {
    const now = this.#clock.now();
    const elapsed = Math.max(0, now - this.#refilledAt);
    this.#refilledAt = now;
    this.#tokens = Math.min(this.#burst, this.#tokens + (elapsed / 1000) * this.#perSecond);
  }
}

/**
 * One token bucket per rule id, shared by all the rule's intents, made on first use with the
 * rule's current `rateLimit` (or, for a rule that is gone, the one its intent was recorded with).
 */
export class RateLimits {
  readonly #clock: Clock;
  readonly #limitOf: (ruleId: string) => RateLimitOptions | undefined;
  readonly #buckets = new Map<string, TokenBucket>();

  constructor(clock: Clock, limitOf: (ruleId: string) => RateLimitOptions | undefined) {
    this.#clock = clock;
    this.#limitOf = limitOf;
  }

  bucket(ruleId: string, recorded: RateLimitOptions): TokenBucket {
    let bucket = this.#buckets.get(ruleId);
    if (bucket === undefined) {
      const limit = this.#limitOf(ruleId) ?? recorded;
      bucket = new TokenBucket(this.#clock, limit.perSecond, limit.burst);
      this.#buckets.set(ruleId, bucket);
    }
    return bucket;
  }

  /** Drops the buckets of changed or removed rules: the next intent makes one with the new limit. */
  forget(ruleIds: Iterable<string>): void {
    for (const id of ruleIds) this.#buckets.delete(id);
  }
}
