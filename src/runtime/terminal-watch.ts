import { throwIfAborted } from '../core/abort-error.js';
import type { Clock } from '../core/clock.js';
import { isTerminal } from '../store/store.js';
import type { IntentEvent } from './submission-tracker.js';

export type TerminalWaitOptions = {
  readonly clock: Clock;
  /** How long to wait at most, in ms. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
};

/**
 * Waits for given intents to become terminal, told by the intent events of the pipeline and the
 * tracker (`note`), with no polling of the journal. Changes before `until` need no listening:
 * they are in the journal already (journal first, then the event), which the caller reads to
 * list the intents still open.
 */
export class TerminalWatch {
  #open: Set<string> | undefined;
  #wake: (() => void) | undefined;
  #failure: { readonly error: unknown } | undefined;

  /** One intent state change. */
  note(event: Pick<IntentEvent, 'commandId' | 'to'>): void {
    const open = this.#open;
    if (open === undefined || !isTerminal(event.to) || !open.delete(event.commandId)) return;
    if (open.size === 0) this.#wake?.();
  }

  /** What the intents wait on failed (the completions stream): `until` rejects with `error`. */
  fail(error: unknown): void {
    this.#failure ??= { error };
    this.#wake?.();
  }

  /**
   * Resolves once every intent of `open` (commandIds not terminal in the journal now) is, with
   * true; after `timeoutMs` with false. Rejects with the failure given to `fail`, or AbortError
   * when `signal` aborts.
   */
  async until(open: Iterable<string>, options: TerminalWaitOptions): Promise<boolean> {
    const waiting = new Set(open);
    this.#open = waiting;
    const { clock, signal } = options;
    if (waiting.size > 0 && this.#failure === undefined && signal?.aborted !== true) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clock.clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          this.#wake = undefined;
          resolve();
        };
        const timer = clock.setTimeout(done, options.timeoutMs);
        signal?.addEventListener('abort', done, { once: true });
        this.#wake = done;
      });
    }
    this.#open = undefined;
    if (this.#failure !== undefined) throw this.#failure.error;
    throwIfAborted(signal);
    return waiting.size === 0;
  }
}
