import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { Admission } from '../../src/runtime/admission.js';
import { BotMetrics } from '../../src/runtime/bot-metrics.js';
import { InFlightIntents, type IntentEvent } from '../../src/runtime/in-flight-intents.js';
import { trackedIntent } from '../../src/runtime/tracked-intent.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';
import { newIntent, payload } from './tracker-fixture.js';

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.reverse()) c();
  cleanup = [];
});

async function setup(storeOverride?: (store: Store) => Store) {
  const clock = new FakeClock(Date.UTC(2026, 0, 5, 9));
  const temp = tempDir();
  const real = openSqliteStore({ dir: temp.dir, clock });
  cleanup.push(() => {
    real.close();
    temp.cleanup();
  });
  const store = storeOverride === undefined ? real : storeOverride(real);
  const metrics = new BotMetrics();
  const admission = new Admission(10);
  const events: IntentEvent[] = [];
  const intents = new InFlightIntents({
    store,
    clock,
    logger: silentLogger,
    metrics,
    onIntent: (e) => events.push(e),
  });
  const [record] = real.recordIntents([newIntent(10)]).inserted;
  if (record === undefined) throw new Error('not recorded');
  const permit = await admission.acquire(record.ruleId, 4);
  const t = trackedIntent({ ...record, payload: payload() }, permit, {
    kind: 'offset',
    offset: 10,
  });
  intents.add(t);
  return { clock, store: real, metrics, admission, events, intents, t };
}

describe('InFlightIntents', () => {
  it('journals a change first, then emits it; settling releases the permit', async () => {
    const { store, metrics, admission, events, intents, t } = await setup();
    expect(metrics.inFlight).toBe(1);
    expect(intents.transition(t, { to: 'submitted', submissionId: 's1' })).toBe(true);
    expect(store.getIntent(t.commandId)?.state).toBe('submitted');
    expect(t.record.state).toBe('submitted');
    intents.settle(t, { to: 'succeeded', completionOffset: 12 });
    expect(events.map((e) => [e.from, e.to])).toEqual([
      ['pending', 'submitted'],
      ['submitted', 'succeeded'],
    ]);
    expect(intents.has(t.commandId)).toBe(false);
    expect(metrics.inFlight).toBe(0);
    expect(admission.inFlightOf('accept')).toBe(0);
  });

  it('drops an intent whose change the journal refuses, leaving it to the next start', async () => {
    const { admission, events, intents, t } = await setup((s) =>
      Object.assign(Object.create(s) as Store, {
        transition: () => {
          throw new Error('disk full');
        },
      }),
    );
    const seq = t.seq;
    expect(intents.transition(t, { to: 'submitted', submissionId: 's1' })).toBe(false);
    expect(events).toEqual([]);
    expect(intents.size).toBe(0);
    expect(t.seq).toBe(seq + 1);
    expect(admission.inFlightOf('accept')).toBe(0);
  });

  it('wakes whenIdle once nothing is busy, or at the grace period', async () => {
    const { clock, intents, t } = await setup();
    t.phase = 'awaiting';
    let idle = false;
    void intents.whenIdle(1000).then(() => (idle = true));
    await clock.advance(0);
    expect(idle).toBe(false);
    t.phase = 'waiting';
    intents.notifyIdle();
    await clock.advance(0);
    expect(idle).toBe(true);

    t.phase = 'checking';
    let timedOut = false;
    void intents.whenIdle(1000).then(() => (timedOut = true));
    await clock.advance(999);
    expect(timedOut).toBe(false);
    await clock.advance(1);
    expect(timedOut).toBe(true);
  });

  it('clear releases every permit and cancels the timers', async () => {
    const { clock, admission, intents, metrics, t } = await setup();
    let fired = false;
    t.timer = clock.setTimeout(() => (fired = true), 10);
    intents.clear();
    await clock.advance(20);
    expect(fired).toBe(false);
    expect(intents.size).toBe(0);
    expect(metrics.inFlight).toBe(0);
    expect(admission.inFlightOf('accept')).toBe(0);
  });
});
