import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { MAX_ATTEMPTS_KEPT } from '../../src/store/attempt-log.js';
import { openSqliteStore, SQLITE_STORE_FILE } from '../../src/store/open-sqlite-store.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite-migrations.js';
import type { AttemptRecord, Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';
import { eventIntent } from './store-fixtures.js';

let dir: string;
let cleanup: () => void;
let clock: FakeClock;
const opened: Store[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  clock = new FakeClock();
});

afterEach(() => {
  for (const s of opened.splice(0)) s.close();
  cleanup();
});

function open(options: Partial<Parameters<typeof openSqliteStore>[0]> = {}): Store {
  const store = openSqliteStore({
    path: join(dir, SQLITE_STORE_FILE),
    clock,
    ...options,
  } as Parameters<typeof openSqliteStore>[0]);
  opened.push(store);
  return store;
}

const tick = (): number => {
  clock.set(clock.now() + 1000);
  return clock.now();
};

const ID = 'lb-rule-1-0';

/** Three attempts: a definite retry, one left in doubt, then a success. */
function threeAttempts(store: Store): AttemptRecord[] {
  store.recordIntents([eventIntent(1)]);
  const t1 = tick();
  store.transition(ID, { to: 'submitted', submissionId: 's1' });
  tick();
  store.transition(ID, {
    to: 'pending',
    nextAttemptAt: 0,
    definite: true,
    error: { code: 'SEQUENCER_BACKPRESSURE', message: 'busy', extra: 'x'.repeat(1000) },
  });
  const t2 = tick();
  store.transition(ID, { to: 'submitted', submissionId: 's2' });
  tick();
  store.transition(ID, { to: 'pending', nextAttemptAt: 0, error: { code: 'TIMEOUT' } });
  const t3 = tick();
  store.transition(ID, { to: 'submitted', submissionId: 's3' });
  store.transition(ID, { to: 'succeeded', completionOffset: 9 });
  return [
    {
      n: 1,
      submissionId: 's1',
      at: t1,
      outcome: 'retry',
      error: { code: 'SEQUENCER_BACKPRESSURE', message: 'busy' },
    },
    {
      n: 2,
      submissionId: 's2',
      at: t2,
      outcome: 'in-doubt',
      error: { code: 'TIMEOUT', message: '' },
    },
    { n: 3, submissionId: 's3', at: t3, outcome: 'succeeded' },
  ];
}

describe('the attempts of an intent', () => {
  it('are every attempt with how it ended, from memory, the log replayed, and after a fold and a reopen', () => {
    const writer = open();
    expect(writer.getAttempts('lb-none')).toBeUndefined();
    const expected = threeAttempts(writer);
    expect(writer.getAttempts(ID)).toEqual(expected);
    // A read-only store replays the writer's log.
    expect(open({ readonly: true }).getAttempts(ID)).toEqual(expected);
    writer.compact(1_000_000_000);
    expect(writer.getAttempts(ID)).toEqual(expected);
    writer.close();
    expect(open().getAttempts(ID)).toEqual(expected);
  });

  it('marks an attempt in doubt when another is sent over it, and a late success settles it', () => {
    const store = open();
    store.recordIntents([eventIntent(1)]);
    store.transition(ID, { to: 'submitted', submissionId: 's1' });
    // A restart (or a timeout) resubmits over the outstanding attempt.
    store.transition(ID, { to: 'submitted', submissionId: 's2' });
    store.transition(ID, { to: 'pending', nextAttemptAt: 0, error: { code: 'TIMEOUT' } });
    expect(store.getAttempts(ID)!.map((a) => a.outcome)).toEqual(['in-doubt', 'in-doubt']);
    // The completion of an earlier attempt arrives while the intent waits for its next one.
    store.transition(ID, { to: 'duplicate' });
    expect(store.getAttempts(ID)!.map((a) => a.outcome)).toEqual(['in-doubt', 'duplicate']);
  });

  it('go on numbering after an operator retries a dead letter', () => {
    const store = open();
    store.recordIntents([eventIntent(1)]);
    store.transition(ID, { to: 'submitted', submissionId: 's1' });
    store.transition(ID, {
      to: 'dead-lettered',
      error: { code: 'INVALID_ARGUMENT', message: 'no' },
    });
    store.requeueDeadLetter(ID);
    store.transition(ID, { to: 'submitted', submissionId: 's2' });
    store.transition(ID, {
      to: 'rejected',
      error: { code: 'CONTRACT_NOT_FOUND', message: 'gone' },
    });
    expect(store.getAttempts(ID)).toEqual([
      expect.objectContaining({
        n: 1,
        outcome: 'dead-lettered',
        error: { code: 'INVALID_ARGUMENT', message: 'no' },
      }) as AttemptRecord,
      expect.objectContaining({ n: 2, outcome: 'rejected' }) as AttemptRecord,
    ]);
    expect(store.getIntent(ID)!.attempts).toBe(1);
  });

  it(`keeps the last ${MAX_ATTEMPTS_KEPT}`, () => {
    const store = open();
    store.recordIntents([eventIntent(1)]);
    for (let i = 1; i <= MAX_ATTEMPTS_KEPT + 5; i++) {
      store.transition(ID, { to: 'submitted', submissionId: `s${i}` });
      store.transition(ID, { to: 'pending', nextAttemptAt: 0, definite: true });
    }
    const attempts = store.getAttempts(ID)!;
    expect(attempts).toHaveLength(MAX_ATTEMPTS_KEPT);
    expect(attempts[0]!.n).toBe(6);
    expect(attempts[attempts.length - 1]!.n).toBe(MAX_ATTEMPTS_KEPT + 5);
  });

  it('opens a version 4 state directory: earlier attempts are counted, not listed; new ones are kept', () => {
    const old = open({ migrations: SQLITE_MIGRATIONS.filter((m) => m.version <= 4) });
    old.recordIntents([eventIntent(1)]);
    old.transition(ID, { to: 'submitted', submissionId: 's1' });
    old.transition(ID, { to: 'pending', nextAttemptAt: 0, definite: true });
    old.close();
    const store = open();
    expect(store.getIntent(ID)!.attempts).toBe(1);
    expect(store.getAttempts(ID)).toEqual([]);
    store.transition(ID, { to: 'submitted', submissionId: 's2' });
    store.transition(ID, { to: 'succeeded' });
    expect(store.getAttempts(ID)).toEqual([
      { n: 2, submissionId: 's2', at: clock.now(), outcome: 'succeeded' },
    ]);
    store.close();
    expect(
      open()
        .getAttempts(ID)!
        .map((a) => a.submissionId),
    ).toEqual(['s2']);
  });
});

describe('the recorded event of an intent', () => {
  it('is the event given when it was recorded, from memory and after a reopen', () => {
    const store = open();
    const event = { updateId: 'u1', offset: 1, event: { CreatedEvent: { contractId: '00c1' } } };
    store.recordIntents([eventIntent(1, 0, { event }), eventIntent(2)]);
    expect(store.getRecordedEvent(ID)).toEqual(event);
    expect(store.getRecordedEvent('lb-rule-2-0')).toBeUndefined();
    expect(store.getRecordedEvent('lb-none')).toBeUndefined();
    store.close();
    expect(open().getRecordedEvent(ID)).toEqual(event);
  });
});
