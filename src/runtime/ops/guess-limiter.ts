import type { Clock } from '../../core/clock.js';

/** Wrong tokens an address may send at once, and how fast it earns one more try. */
export const GUESS_BURST = 10;
export const GUESS_REFILL_MS = 6_000;
/** Addresses remembered; beyond, the one remembered longest is forgotten. */
const MAX_ADDRESSES = 1_000;

type Allowance = { tries: number; at: number };

/**
 * Slows down guessing the ops token: every wrong token (bearer header or sign-in) costs the
 * remote address one of its `GUESS_BURST` tries, which come back one per `GUESS_REFILL_MS`.
 * An address without tries left is not even checked until one is back, so at most about ten
 * guesses a minute get through from one address, whatever it sends.
 */
export class GuessLimiter {
  readonly #clock: Clock;
  readonly #byAddress = new Map<string, Allowance>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Milliseconds until `address` may try a token again; 0 when it may now. */
  waitMs(address: string): number {
    const a = this.#current(address);
    return a === undefined || a.tries >= 1 ? 0 : Math.ceil((1 - a.tries) * GUESS_REFILL_MS);
  }

  /** `address` sent a wrong token. */
  failed(address: string): void {
    const a = this.#current(address) ?? { tries: GUESS_BURST, at: this.#clock.now() };
    a.tries -= 1;
    this.#byAddress.delete(address);
    this.#byAddress.set(address, a);
    if (this.#byAddress.size > MAX_ADDRESSES) {
      this.#byAddress.delete(this.#byAddress.keys().next().value!);
    }
  }

  /** The address's allowance refilled to now; undefined once it is whole again (forgotten). */
  #current(address: string): Allowance | undefined {
    const a = this.#byAddress.get(address);
    if (a === undefined) return undefined;
    const now = this.#clock.now();
    a.tries = Math.min(GUESS_BURST, a.tries + Math.max(0, now - a.at) / GUESS_REFILL_MS);
    a.at = now;
    if (a.tries < GUESS_BURST) return a;
    this.#byAddress.delete(address);
    return undefined;
  }
}
