import type { Clock } from '../../core/clock.js';
import type { LeaseHold } from './commit-fence.js';

type Held = { generation: number; validUntil: number };

/**
 * The leases this instance holds, as it knows them: the generation of each, and until when it
 * may count on it by its own clock. A lease is valid for `leaseMs` from the moment the request
 * that took or renewed it was SENT: the database set the expiry at its own `now()` when the
 * request arrived, which is later, so a lease this book counts as valid has not expired in the
 * database either (clocks run at the same rate; their offsets do not matter). A process that was
 * paused finds on waking that its leases are past their time before it asks the database.
 */
export class LeaseBook {
  readonly #clock: Clock;
  readonly #leaseMs: number;
  readonly #held = new Map<string, Held>();

  constructor(clock: Clock, leaseMs: number) {
    this.#clock = clock;
    this.#leaseMs = leaseMs;
  }

  /** The rules held and their generations (expired ones included until `expire` drops them). */
  held(): LeaseHold[] {
    return [...this.#held].map(([ruleId, h]) => ({ ruleId, generation: h.generation }));
  }

  get size(): number {
    return this.#held.size;
  }

  generationOf(ruleId: string): number | undefined {
    return this.#held.get(ruleId)?.generation;
  }

  /** Whether `hold` is held at its generation and still within its time. */
  isValid(hold: LeaseHold): boolean {
    const h = this.#held.get(hold.ruleId);
    return h !== undefined && h.generation === hold.generation && this.#clock.now() < h.validUntil;
  }

  /** Leases taken by a request sent at `sentAt`. */
  acquired(holds: readonly LeaseHold[], sentAt: number): void {
    for (const { ruleId, generation } of holds) {
      this.#held.set(ruleId, { generation, validUntil: sentAt + this.#leaseMs });
    }
  }

  /** Leases renewed by a request sent at `sentAt` (a rule not held, or held at another generation, is left). */
  renewed(holds: readonly LeaseHold[], sentAt: number): void {
    for (const { ruleId, generation } of holds) {
      const h = this.#held.get(ruleId);
      if (h?.generation === generation) h.validUntil = sentAt + this.#leaseMs;
    }
  }

  /** Forgets `ruleIds`; returns the leases it held of them. */
  drop(ruleIds: Iterable<string>): LeaseHold[] {
    const dropped: LeaseHold[] = [];
    for (const ruleId of ruleIds) {
      const h = this.#held.get(ruleId);
      if (h === undefined) continue;
      this.#held.delete(ruleId);
      dropped.push({ ruleId, generation: h.generation });
    }
    return dropped;
  }

  /** Forgets the leases past their time and returns them: they must be counted as lost. */
  expire(): LeaseHold[] {
    const now = this.#clock.now();
    return this.drop([...this.#held].filter(([, h]) => now >= h.validUntil).map(([id]) => id));
  }
}
