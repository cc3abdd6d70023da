import { withScope, type TestScope } from './test-scope.js';
import { waitFor } from './wait-for.js';

/** One integration run: what to start, what to wait for, what to check while it still runs. */
export type RunUntil<R, T, U> = {
  /** Starts what the test needs, registering each piece on `scope` (it is stopped in reverse). */
  readonly start: (scope: TestScope) => Promise<R>;
  /** Read on each poll: the ledger's contracts, the bot's journal, a metric. */
  readonly probe: (running: R) => Promise<T> | T;
  /** The condition the run waits for. */
  readonly until: (value: T) => boolean;
  /** What is waited for, in words: the timeout error says it with the last value probed. */
  readonly what: string;
  readonly timeoutMs: number;
  /**
   * The test's further steps and assertions, before anything is stopped; what it starts on
   * `scope` (a second replica, a restart) is stopped with the rest.
   */
  readonly then?: (running: R, value: T, scope: TestScope) => Promise<U> | U;
};

/**
 * Starts what `start` builds, polls `probe` until `until` holds (bounded by `timeoutMs`: the
 * error names `what` and the last value), runs `then`, and stops and removes everything `start`
 * registered, in reverse order, whether the run passed, failed or timed out. Returns what `then`
 * returned, or else the value that met the condition.
 */
export async function runUntil<R, T, U = T>(run: RunUntil<R, T, U>): Promise<U> {
  return withScope(async (scope) => {
    const running = await run.start(scope);
    const value = await waitFor(() => run.probe(running), run.until, run.timeoutMs, run.what);
    return run.then === undefined ? (value as unknown as U) : await run.then(running, value, scope);
  });
}
