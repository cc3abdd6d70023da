import type { Logger } from '../core/logger.js';
import { errorFields } from './error-record.js';

/** One step of a shutdown: named for the log line if it fails. */
export type CleanupStep = {
  readonly name: string;
  /** May return a promise, which the next step waits for. */
  run(): unknown;
};

/**
 * Runs `steps` in order, each isolated: a step that throws (or rejects) is logged and the rest
 * still run, so the last ones (saving the checkpoint, closing the store) always happen (as
 * BullMQ's Worker.close runs its cleanups). Synchronous steps run without a turn of the event
 * loop in between; the returned promise never rejects.
 */
export async function runCleanupSteps(
  steps: readonly CleanupStep[],
  logger: Logger,
): Promise<void> {
  for (const step of steps) {
    try {
      const result = step.run();
      if (result instanceof Promise) await result;
    } catch (err) {
      logger.warn({ step: step.name, ...errorFields(err) }, 'cleanup step failed');
    }
  }
}
