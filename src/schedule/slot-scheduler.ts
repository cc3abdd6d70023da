import type { Clock, TimerHandle } from '../core/clock.js';
import type { ScheduleTrigger } from '../rules/compiled-rule.js';
import { nextSlots } from './slots-between.js';

/**
 * What wakes the schedule driver. A wake is only a prompt: the driver asks the pure slot
 * functions which slots are due, so an early, late, extra or repeated wake never runs a slot
 * twice or at the wrong time.
 */
export type SlotScheduler = {
  watch(trigger: ScheduleTrigger, wake: () => void): { stop(): void };
};

/** setTimeout's limit is about 24.8 days; longer waits are re-armed in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Wakes at each slot computed with `nextSlots`, on the given clock. With a FakeClock it drives
 * schedules in tests without waiting.
 */
export function clockSlotScheduler(clock: Clock): SlotScheduler {
  return {
    watch(trigger, wake) {
      let handle: TimerHandle | undefined;
      let stopped = false;
      const arm = (): void => {
        if (stopped) return;
        const now = clock.now();
        const [next] = nextSlots(trigger.cronSpec, trigger.timezone, now, 1);
        if (next === undefined) return;
        const due = next - now;
        handle = clock.setTimeout(
          () => {
            if (due <= MAX_TIMER_MS) wake();
            arm();
          },
          Math.min(due, MAX_TIMER_MS),
        );
      };
      arm();
      return {
        stop() {
          stopped = true;
          if (handle !== undefined) clock.clearTimeout(handle);
        },
      };
    },
  };
}
