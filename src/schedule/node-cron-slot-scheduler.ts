import { createTask, type Logger as CronLogger, type ScheduledTask } from 'node-cron';
import type { Logger } from '../core/logger.js';
import type { SlotScheduler } from './slot-scheduler.js';

/**
 * The real-time trigger: node-cron ticks every minute at second 0 and at each second the spec
 * names, and every tick wakes the driver, which runs a slot only when the pure slot functions
 * say one is due (a cheap comparison otherwise). node-cron is thus only the clock: slot times,
 * time zones and daylight saving are decided in one place, `slotsBetween`, never by two cron
 * implementations that might disagree (on a spring-forward day, say).
 */
export function nodeCronSlotScheduler(logger: Logger): SlotScheduler {
  const cronLogger = adaptLogger(logger);
  return {
    watch(trigger, wake) {
      const seconds = [...new Set([0, ...trigger.cronSpec.seconds])].sort((a, b) => a - b);
      const task: ScheduledTask = createTask(`${seconds.join(',')} * * * * *`, () => wake(), {
        logger: cronLogger,
        suppressMissedWarning: true,
      });
      void Promise.resolve(task.start()).catch((error: unknown) =>
        logger.error({ err: error }, 'schedule trigger did not start'),
      );
      return {
        stop() {
          void Promise.resolve(task.destroy()).catch(() => undefined);
        },
      };
    },
  };
}

function adaptLogger(logger: Logger): CronLogger {
  const errorOf = (message: string | Error, err?: Error): Record<string, unknown> => ({
    component: 'node-cron',
    ...(err === undefined ? {} : { err }),
    ...(message instanceof Error ? { err: message } : {}),
  });
  const text = (message: string | Error): string =>
    message instanceof Error ? message.message : message;
  return {
    info: (message) => logger.debug({ component: 'node-cron' }, message),
    warn: (message) => logger.warn({ component: 'node-cron' }, message),
    error: (message, err) => logger.error(errorOf(message, err), text(message)),
    debug: (message, err) => logger.debug(errorOf(message, err), text(message)),
  };
}
