import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { DEFAULTS } from '../../src/core/defaults.js';
import { FakeClock } from '../../src/core/fake-clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { systemRandom } from '../../src/core/random.js';
import { compileBotOptions } from '../../src/runtime/compile-bot-options.js';
import { PARTIES, rules } from './bot-fixture.js';

const base = {
  rules: rules(),
  parties: PARTIES,
  userId: 'u',
  ledger: {} as never,
  store: {} as never,
};

describe('compileBotOptions', () => {
  it('fills every default from DEFAULTS', () => {
    const o = compileBotOptions(base);
    expect(o).toMatchObject({
      closeStore: true,
      start: { kind: 'checkpoint' },
      resetCheckpoint: false,
      submission: {
        maxInFlight: 32,
        completionTimeoutMs: 30_000,
        dedup: { mode: 'offset', fallbackMs: 24 * 3_600_000 },
      },
      stopGraceMs: 10_000,
      restartBackoff: { initialMs: 1_000, maxMs: 60_000 },
      streamBackoff: undefined,
      schedule: { drive: true },
      shadow: false,
      retentionMs: 7 * 86_400_000,
    });
    expect(o.submission.maxInFlight).toBe(DEFAULTS.submission.maxInFlight);
    expect(o.submission.dedup).toEqual({
      mode: 'offset',
      fallbackMs: DEFAULTS.submission.dedupFallbackMs,
    });
    expect(o.retentionMs).toBe(DEFAULTS.retentionMs);
    expect(o.clock).toBe(systemClock);
    expect(o.random).toBe(systemRandom);
    expect(o.logger).toBe(silentLogger);
  });

  it('keeps what the caller gave, field by field', () => {
    const clock = new FakeClock(0);
    const o = compileBotOptions({
      ...base,
      submission: { maxInFlight: 2 },
      schedule: { drive: false, batchSize: 5 },
      closeStore: false,
      shadow: true,
      clock,
    });
    expect(o.submission).toEqual({
      maxInFlight: 2,
      completionTimeoutMs: DEFAULTS.submission.completionTimeoutMs,
      dedup: { mode: 'offset', fallbackMs: DEFAULTS.submission.dedupFallbackMs },
    });
    expect(o.schedule).toEqual({ drive: false, batchSize: 5 });
    expect(o.closeStore).toBe(false);
    expect(o.shadow).toBe(true);
    expect(o.clock).toBe(clock);
  });
});
