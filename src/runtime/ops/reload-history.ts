import type { Clock } from '../../core/clock.js';
import type { RuleSetDiff } from '../rule-set-diff.js';
import { iso } from './ops-http.js';

/** What a reload did: applied (with the diff), or rejected with every problem. */
export type ReloadOutcome =
  | { readonly applied: true; readonly diff: RuleSetDiff }
  | { readonly applied: false; readonly errors: readonly string[] };

/** The last reload as `GET /reload` and the `reload` event show it. */
export type ReloadRecord = ReloadOutcome & { readonly at: string };

/**
 * The last reload of the rule files by any path (`POST /rules/reload`, SIGHUP, the file watch)
 * and the rule set's generation in this process: 1 at start, one more per applied reload.
 */
export class ReloadHistory {
  #last: ReloadRecord | undefined;
  #revision = 1;
  readonly #listeners = new Set<(record: ReloadRecord) => void>();

  constructor(private readonly clock: Clock) {}

  get last(): ReloadRecord | undefined {
    return this.#last;
  }

  get revision(): number {
    return this.#revision;
  }

  record(outcome: ReloadOutcome): void {
    if (outcome.applied) this.#revision += 1;
    this.#last = { at: iso(this.clock.now()), ...outcome };
    for (const listener of this.#listeners) listener(this.#last);
  }

  /** Calls `listener` after each reload; returns the function that stops it. */
  subscribe(listener: (record: ReloadRecord) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** `reload`, with each outcome recorded here. */
  recording(reload: () => Promise<ReloadOutcome>): () => Promise<ReloadOutcome> {
    return async () => {
      const outcome = await reload();
      this.record(outcome);
      return outcome;
    };
  }
}
