import { afterEach, describe, expect, it } from 'vitest';
import type { Completion } from '../../../src/ledger/wire/wire-types.js';
import { createOpsMetrics, intentLatencySeconds } from '../../../src/runtime/ops/ops-metrics.js';
import { botFixture, invoiceCreated, type BotFixture } from '../bot-fixture.js';
import { completionOf } from '../tracker-fixture.js';

let f: BotFixture | undefined;
afterEach(async () => {
  await f?.cleanup();
  f = undefined;
});

const T0 = Date.UTC(2026, 0, 5, 9);

describe('intentLatencySeconds', () => {
  const event = { kind: 'event', updateId: 'u', nodeId: 0 } as const;

  it('starts at the event time of an event intent', () => {
    expect(intentLatencySeconds({ trigger: event, createdAt: T0 }, T0 - 4_000, T0 + 1_500)).toBe(
      5.5,
    );
  });

  it('starts at the slot of a schedule intent, whatever event time is given', () => {
    const trigger = { kind: 'slot', slot: T0 - 10_000, contractId: '00c' } as const;
    expect(intentLatencySeconds({ trigger, createdAt: T0 }, T0 - 99_000, T0 + 2_000)).toBe(12);
  });

  it('falls back to the record time of the intent without an event time', () => {
    expect(intentLatencySeconds({ trigger: event, createdAt: T0 }, undefined, T0 + 250)).toBe(0.25);
  });

  it('clamps a start in the future (clock skew) at 0', () => {
    expect(intentLatencySeconds({ trigger: event, createdAt: T0 }, T0 + 3_000, T0)).toBe(0);
    const trigger = { kind: 'slot', slot: T0 + 60_000, contractId: '00c' } as const;
    expect(intentLatencySeconds({ trigger, createdAt: T0 }, undefined, T0)).toBe(0);
  });
});

type HistogramValue = { labels: Record<string, unknown>; value: number; metricName?: string };

async function histogram(
  metrics: ReturnType<typeof createOpsMetrics>,
  name: string,
): Promise<{ count: number; sum: number }> {
  const metric = metrics.registry.getSingleMetric(name);
  if (metric === undefined) throw new Error(`no metric ${name}`);
  const values = (await metric.get()).values as HistogramValue[];
  const pick = (suffix: string): number =>
    values.find((v) => v.metricName === `${name}${suffix}` && v.labels.rule === 'accept')?.value ??
    0;
  return { count: pick('_count'), sum: pick('_sum') };
}

describe('latency histograms', () => {
  it('measure from the record time of the triggering transaction, on the injected clock', async () => {
    f = botFixture();
    const metrics = createOpsMetrics({
      bot: f.bot,
      store: f.store,
      clock: f.clock,
      ledgerEnd: () => undefined,
      processMetrics: false,
    });
    try {
      f.ledger.end = 10;
      await f.bot.start();
      // Recorded at 08:59:00; the bot's clock says 09:00:00: the event is 60 s old on arrival.
      f.ledger.updateQueue.push(invoiceCreated(11));
      await f.settle();
      expect(f.ledger.submits).toHaveLength(1);
      expect(await histogram(metrics, 'ledgerbot_event_to_submit_seconds')).toEqual({
        count: 1,
        sum: 60,
      });
      expect((await histogram(metrics, 'ledgerbot_event_to_completion_seconds')).count).toBe(0);

      await f.clock.advance(4_500);
      const completion: Completion = completionOf(f.ledger.submits[0]!, 12);
      f.ledger.completionQueue.push({ kind: 'completion', offset: 12, completion });
      await f.settle();
      expect(f.store.countByState().succeeded).toBe(1);
      expect(await histogram(metrics, 'ledgerbot_event_to_completion_seconds')).toEqual({
        count: 1,
        sum: 64.5,
      });
      // Terminal: the bot no longer keeps the event time.
      expect(f.bot.metrics.eventTimeOf(f.ledger.submits[0]!.commandId)).toBeUndefined();
    } finally {
      metrics.close();
    }
  });
});
