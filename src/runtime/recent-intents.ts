import type { IntentState } from '../store/store.js';
import { errorRecordOf } from './error-record.js';
import type { IntentEvent } from './submission-tracker.js';

/** The latest state of one intent this process saw change. */
export type IntentSummary = {
  readonly commandId: string;
  readonly ruleId: string;
  readonly state: IntentState;
  readonly attempts: number;
  readonly offset: number;
  /** Epoch ms. */
  readonly updatedAt: number;
  readonly error?: { readonly code: string; readonly message: string };
};

/** The latest intent state changes of this process, one entry per intent, at most `limit`. */
export class RecentIntents {
  readonly #limit: number;
  readonly #byId = new Map<string, IntentSummary>();

  constructor(limit = 50) {
    this.#limit = limit;
  }

  note(event: IntentEvent): void {
    const r = event.record;
    this.#byId.delete(r.commandId);
    const error = event.error ?? errorRecordOf(r.lastError);
    this.#byId.set(r.commandId, {
      commandId: r.commandId,
      ruleId: r.ruleId,
      state: r.state,
      attempts: r.attempts,
      offset: r.offset,
      updatedAt: r.updatedAt,
      ...(error === undefined ? {} : { error: { code: error.code, message: error.message } }),
    });
    if (this.#byId.size > this.#limit) {
      const oldest = this.#byId.keys().next().value;
      if (oldest !== undefined) this.#byId.delete(oldest);
    }
  }

  /** Newest first. */
  list(): IntentSummary[] {
    return [...this.#byId.values()].reverse();
  }
}
