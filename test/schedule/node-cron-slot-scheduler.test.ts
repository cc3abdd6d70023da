import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import type { ScheduleTrigger } from '../../src/rules/compiled-rule.js';
import { parseCron } from '../../src/rules/parse-cron.js';
import { nodeCronSlotScheduler } from '../../src/schedule/node-cron-slot-scheduler.js';

function trigger(cron: string): ScheduleTrigger {
  const cronSpec = parseCron(cron);
  if ('problem' in cronSpec) throw new Error(cronSpec.problem);
  return {
    kind: 'schedule',
    cron,
    cronSpec,
    timezone: 'UTC',
    forEach: null,
    catchUp: 'last',
    maxCatchUp: 10,
    jitterMs: 0,
    pos: { file: 'x.yaml', line: 1, col: 1 },
  };
}

describe('nodeCronSlotScheduler', () => {
  it('wakes on the whole second the spec names (real time, about a second)', async () => {
    const wakes: number[] = [];
    const watch = nodeCronSlotScheduler(silentLogger).watch(trigger('* * * * * *'), () =>
      wakes.push(Date.now()),
    );
    try {
      const deadline = Date.now() + 3_000;
      while (wakes.length < 1 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    } finally {
      watch.stop();
    }
    expect(wakes.length).toBeGreaterThanOrEqual(1);
    // node-cron fires at (or just after) the second boundary.
    expect(wakes[0]! % 1000).toBeLessThan(250);
    const count = wakes.length;
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(wakes.length).toBe(count);
  });
});
