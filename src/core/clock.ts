import { AbortError } from './abort-error.js';

export type TimerHandle = { readonly id: unknown };

/**
 * Time as a dependency. Everything that waits or reads the time takes a Clock, so tests can drive
 * it with FakeClock instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
  /**
   * Resolves after `ms`; rejects with AbortError when `signal` aborts first. The system clock's
   * sleep keeps the process alive while it waits; its `setTimeout` does not.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export function sleepWith(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(new AbortError(undefined, { cause: signal.reason }));
      return;
    }
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      reject(new AbortError(undefined, { cause: signal?.reason }));
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const id = setTimeout(fn, ms);
    // A pending retry or refresh timer must never keep the process alive on its own.
    id.unref();
    return { id };
  },
  clearTimeout: (handle) => clearTimeout(handle.id as NodeJS.Timeout),
  // Unlike setTimeout's, a sleep holds the process: someone awaits it (a stream waiting to
  // reconnect, a call waiting to retry), and a program whose only pending work is that wait
  // must not end in the middle of it with nothing said.
  sleep: (ms, signal) => sleepWith(refClock, ms, signal),
};

/** The system clock whose timers keep the process alive (for `systemClock.sleep`). */
const refClock: Clock = {
  ...systemClock,
  setTimeout: (fn, ms) => ({ id: setTimeout(fn, ms) }),
};
