import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { SeededRandom } from '../../src/core/seeded-random.js';
import type { JsCommands } from '../../src/ledger/wire/wire-types.js';
import { Admission } from '../../src/runtime/admission.js';
import { BotMetrics } from '../../src/runtime/bot-metrics.js';
import { InFlightIntents } from '../../src/runtime/in-flight-intents.js';
import { sendAttempt, type SendAttemptDeps } from '../../src/runtime/send-attempt.js';
import { TokenBucket } from '../../src/runtime/token-bucket.js';
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

async function setup(submit: (body: JsCommands) => Promise<unknown>, retry = payload().retry) {
  const clock = new FakeClock(Date.UTC(2026, 0, 5, 9));
  const temp = tempDir();
  const store: Store = openSqliteStore({ dir: temp.dir, clock });
  cleanup.push(() => {
    store.close();
    temp.cleanup();
  });
  const metrics = new BotMetrics();
  const intents = new InFlightIntents({ store, clock, logger: silentLogger, metrics });
  const [record] = store.recordIntents([newIntent(10, { payload: payload({ retry }) })]).inserted;
  if (record === undefined) throw new Error('not recorded');
  const permit = await new Admission(10).acquire(record.ruleId, 4);
  const t = trackedIntent({ ...record, payload: payload({ retry }) }, permit, {
    kind: 'offset',
    offset: 10,
  });
  intents.add(t);
  const bucket = new TokenBucket(clock, 1000, 1000);
  const deps: SendAttemptDeps = {
    ledger: { submit: (body) => submit(body) },
    store,
    clock,
    random: new SeededRandom(3),
    metrics,
    intents,
    rateLimiter: () => bucket,
    signal: new AbortController().signal,
    closing: () => false,
  };
  return { deps, store, t, metrics };
}

describe('sendAttempt', () => {
  it('journals the attempt with a fresh submissionId before the participant sees it', async () => {
    let stateAtSubmit: string | undefined;
    let body: JsCommands | undefined;
    const s = await setup((b) => {
      body = b;
      stateAtSubmit = s.store.getIntent(b.commandId)?.state;
      return Promise.resolve({});
    });
    const t = s.t;
    const outcome = await sendAttempt(s.deps, t);
    expect(outcome).toEqual({ kind: 'sent', seq: t.seq });
    expect(stateAtSubmit).toBe('submitted');
    expect(body?.submissionId).toBe(t.submissionId);
    expect(body?.deduplicationPeriod).toEqual({ DeduplicationOffset: { value: 10 } });
    expect(s.store.getIntent(t.commandId)?.submissionId).toBe(t.submissionId);
    expect(s.metrics.submissions).toBe(1);
  });

  it("hands back the participant's refusal", async () => {
    const refusal = new Error('refused');
    const s = await setup(() => Promise.reject(refusal));
    expect(await sendAttempt(s.deps, s.t)).toEqual({
      kind: 'failed',
      error: refusal,
      seq: s.t.seq,
    });
  });

  it('gives up before submitting once the attempts are spent', async () => {
    const calls: unknown[] = [];
    const s = await setup(
      (b) => {
        calls.push(b);
        return Promise.resolve({});
      },
      { ...payload().retry, maxAttempts: 0 },
    );
    expect(await sendAttempt(s.deps, s.t)).toEqual({ kind: 'give-up', reason: 'max-attempts' });
    expect(calls).toEqual([]);
  });

  it('stops when the intent moved on while the call was out (a completion came first)', async () => {
    const s = await setup(() => {
      s.t.seq += 1;
      return Promise.resolve({});
    });
    expect(await sendAttempt(s.deps, s.t)).toEqual({ kind: 'stopped' });
  });

  it('stops without submitting when the tracker is closing', async () => {
    const calls: unknown[] = [];
    const s = await setup((b) => {
      calls.push(b);
      return Promise.resolve({});
    });
    expect(await sendAttempt({ ...s.deps, closing: () => true }, s.t)).toEqual({ kind: 'stopped' });
    expect(calls).toEqual([]);
    expect(s.store.getIntent(s.t.commandId)?.state).toBe('pending');
  });
});
