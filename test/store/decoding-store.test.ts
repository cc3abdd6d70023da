import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { decodingStore } from '../../src/store/decoding-store.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';
import { eventIntent } from './store-fixtures.js';

/** The decoded type of these tests: a counter payload, or 'bad' for a row without one. */
type Counted = { readonly n: number } | 'bad';

function counted(offset: number): ReturnType<typeof eventIntent> & { payload: Counted } {
  return { ...eventIntent(offset), payload: { n: offset } };
}

let cleanup: () => void;
let raw: Store;
let store: Store<Counted>;
let calls: number;

beforeEach(() => {
  let dir: string;
  ({ dir, cleanup } = tempDir());
  raw = openSqliteStore({ dir, clock: new FakeClock() });
  calls = 0;
  store = decodingStore(raw, (stored): Counted => {
    calls += 1;
    const n = (stored as { n?: unknown } | null)?.n;
    return typeof n === 'number' ? { n } : 'bad';
  });
});

afterEach(() => {
  store.close();
  cleanup();
});

describe('decodingStore', () => {
  it('decodes the payload of every record it hands out, once per stored payload', () => {
    const intent = counted(1);
    const recorded = store.recordIntents([intent]);
    expect(recorded.inserted[0]!.payload).toEqual({ n: 1 });
    expect(calls).toBe(1);
    expect(store.recordIntents([intent]).existing[0]!.payload).toEqual({ n: 1 });
    expect(store.getIntent(intent.commandId)!.payload).toEqual({ n: 1 });
    expect(store.openIntents()[0]!.payload).toEqual({ n: 1 });
    expect(store.listIntents()[0]!.payload).toEqual({ n: 1 });
    const sent = store.transition(intent.commandId, { to: 'submitted', submissionId: 's' });
    expect(sent).toMatchObject({ state: 'submitted', payload: { n: 1 } });
    store.transition(intent.commandId, { to: 'dead-lettered', error: { code: 'X' } });
    expect(store.listDeadLetters()[0]!.intent.payload).toEqual({ n: 1 });
    expect(store.getDeadLetter(intent.commandId)).toMatchObject({
      error: { code: 'X' },
      intent: { payload: { n: 1 } },
    });
    expect(store.requeueDeadLetter(intent.commandId).payload).toEqual({ n: 1 });
    // The store kept the intent in memory: one payload object, decoded once.
    expect(calls).toBe(1);
    // A payload read from the file again is a new object: decoded again, once.
    store.transition(intent.commandId, { to: 'dead-lettered', error: { code: 'Y' } });
    raw.compact(0); // folds the journal: the finished intent leaves memory
    expect(store.getIntent(intent.commandId)!.payload).toEqual({ n: 1 });
    expect(store.getDeadLetter(intent.commandId)!.intent.payload).toEqual({ n: 1 });
    expect(calls).toBe(3);
  });

  it('hands out what the decoder made of a row it cannot use', () => {
    raw.recordIntents([eventIntent(2)]);
    expect(store.getIntent('lb-rule-2-0')!.payload).toBe('bad');
  });

  it('leaves everything but payloads to the store below', async () => {
    store.batch(() => {
      store.recordIntents([counted(3)]);
      store.advanceCheckpoint(5);
    });
    await store.sync();
    store.flush();
    expect(raw.checkpoint()).toBe(2);
    expect(store.checkpoint()).toBe(2);
    store.resetCheckpoint(9);
    expect(raw.checkpoint()).toBe(9);
    expect(store.hasEventIntent('rule', 3, 0)).toBe(true);
    expect(store.countByState()).toEqual(raw.countByState());
    expect(store.beginSlot('daily', 1000, 7)).toEqual(raw.getSlotRecord('daily'));
    expect(store.completeSlot('daily', 1000)).toMatchObject({ lastCompletedSlot: 1000 });
    expect(store.getSlotRecord('daily')).toEqual(raw.getSlotRecord('daily'));
    expect(store.listSlotRecords()).toEqual(raw.listSlotRecords());
    expect(store.compact(0)).toBe(0);
    store.transition('lb-rule-3-0', { to: 'dead-lettered', error: {} });
    expect(store.purgeDeadLetter('lb-rule-3-0')).toBe(true);
    expect(raw.getIntent('lb-rule-3-0')).toBeUndefined();
    store.close();
    expect(() => raw.checkpoint()).toThrow(/closed/);
  });
});
