import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { StoreError } from '../../src/store/store-error.js';
import { storeQueries } from '../../src/store/store-queries.js';
import { tempDir } from '../support/temp-dir.js';
import { eventIntent } from './store-fixtures.js';

let dir: string;
let cleanup: () => void;
let store: Store;

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  store = openSqliteStore({ dir, clock: new FakeClock() });
});

afterEach(() => {
  store.close();
  cleanup();
});

describe('storeQueries', () => {
  it("answers each query with the store's own read", async () => {
    store.recordIntents([eventIntent(10), eventIntent(11)]);
    store.transition('lb-rule-10-0', { to: 'submitted', submissionId: 's-1' });
    store.transition('lb-rule-10-0', { to: 'dead-lettered', error: { code: 'X' } });
    store.beginSlot('nightly', 1_000);
    const q = storeQueries(store);
    expect(await q.getIntent('lb-rule-11-0')).toEqual(store.getIntent('lb-rule-11-0'));
    expect(await q.getIntent('nope')).toBeUndefined();
    expect(await q.listIntents({ order: 'recent' })).toEqual(
      store.listIntents({ order: 'recent' }),
    );
    expect((await q.getAttempts('lb-rule-10-0'))?.map((a) => a.submissionId)).toEqual(['s-1']);
    expect(await q.getRecordedEvent('lb-rule-10-0')).toEqual(
      store.getRecordedEvent('lb-rule-10-0'),
    );
    expect(await q.countByState()).toMatchObject({ pending: 1, 'dead-lettered': 1 });
    expect((await q.listDeadLetters()).map((d) => d.intent.commandId)).toEqual(['lb-rule-10-0']);
    expect((await q.getDeadLetter('lb-rule-10-0'))?.error).toEqual({ code: 'X' });
    expect(await q.listSlotRecords()).toEqual([
      expect.objectContaining({ ruleId: 'nightly', inProgressSlot: 1_000 }),
    ]);
  });

  it("rejects with the store's error instead of throwing (a closed store)", async () => {
    const q = storeQueries(store);
    store.close();
    const pending = q.countByState();
    await expect(pending).rejects.toBeInstanceOf(StoreError);
    await expect(q.listIntents()).rejects.toMatchObject({ code: 'STORE_CLOSED' });
  });
});
