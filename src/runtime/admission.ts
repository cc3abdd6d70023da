import { AbortError } from '../core/abort-error.js';

/** A held place among the intents being worked on; `release` is idempotent. */
export type Permit = { readonly ruleId: string; release(): void };

type Waiter = {
  readonly ruleId: string;
  readonly limit: number;
  readonly grant: (permit: Permit) => void;
};

/**
 * Bounds the intents being worked on (submitted, awaiting a completion, or backing off before a
 * retry): at most `maxInFlight` over all rules and `limit` per rule. `acquire` waits while a
 * bound is hit; the caller (the ingest loop) then stops pulling events, so the websocket applies
 * backpressure instead of anything queueing in memory. Waiters are served in arrival order.
 */
export class Admission {
  readonly #maxInFlight: number;
  readonly #byRule = new Map<string, number>();
  #total = 0;
  #waiters: Waiter[] = [];

  constructor(maxInFlight: number) {
    this.#maxInFlight = Math.max(1, maxInFlight);
  }

  get inFlight(): number {
    return this.#total;
  }

  /** Intents waiting for a place. */
  get waiting(): number {
    return this.#waiters.length;
  }

  inFlightOf(ruleId: string): number {
    return this.#byRule.get(ruleId) ?? 0;
  }

  /** A place for one intent of `ruleId`, whose per-rule bound is `limit`. */
  acquire(ruleId: string, limit: number, signal?: AbortSignal): Promise<Permit> {
    if (signal?.aborted === true) {
      return Promise.reject(new AbortError(undefined, { cause: signal.reason }));
    }
    if (this.#waiters.length === 0 && this.#fits(ruleId, limit)) {
      return Promise.resolve(this.#take(ruleId));
    }
    return new Promise<Permit>((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(new AbortError(undefined, { cause: signal?.reason }));
      };
      const waiter: Waiter = {
        ruleId,
        limit,
        grant: (permit) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(permit);
        },
      };
      this.#waiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #fits(ruleId: string, limit: number): boolean {
    return this.#total < this.#maxInFlight && this.inFlightOf(ruleId) < Math.max(1, limit);
  }

  #take(ruleId: string): Permit {
    this.#total += 1;
    this.#byRule.set(ruleId, this.inFlightOf(ruleId) + 1);
    let released = false;
    return {
      ruleId,
      release: () => {
        if (released) return;
        released = true;
        this.#total -= 1;
        const n = this.inFlightOf(ruleId) - 1;
        if (n <= 0) this.#byRule.delete(ruleId);
        else this.#byRule.set(ruleId, n);
        this.#grantWaiters();
      },
    };
  }

  #grantWaiters(): void {
    // Strict arrival order: the first waiter blocks the others until it fits.
    while (this.#waiters.length > 0) {
      const first = this.#waiters[0]!;
      if (!this.#fits(first.ruleId, first.limit)) return;
      this.#waiters.shift();
      first.grant(this.#take(first.ruleId));
    }
  }
}
