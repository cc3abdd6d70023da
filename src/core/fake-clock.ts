import { sleepWith, type Clock, type TimerHandle } from './clock.js';

type Timer = { id: number; at: number; fn: () => void };

/** A manually advanced clock for tests: timers fire only inside `advance`. */
export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  #timers: Timer[] = [];

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { id: this.#nextId++, at: this.#now + Math.max(0, ms), fn };
    this.#timers.push(timer);
    return { id: timer.id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle.id);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }

  /** Number of timers not yet fired. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /**
   * Moves time forward by `ms`, firing due timers in order and letting promise callbacks run
   * between them, so code that awaits a sleep and then schedules another one behaves as in real time.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      await flushMicrotasks();
      const due = this.#timers
        .filter((t) => t.at <= target)
        .sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (due === undefined) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = Math.max(this.#now, due.at);
      due.fn();
    }
    this.#now = target;
    await flushMicrotasks();
  }

  /** Sets the wall time without firing timers (a clock jump). */
  set(ms: number): void {
    this.#now = ms;
  }
}

async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}
