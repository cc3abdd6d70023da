import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { JournalCompactor } from '../../src/runtime/journal-compactor.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';
import { eventIntent } from '../store/store-fixtures.js';

const HOUR = 3600_000;
let store: Store;
let cleanup: () => void;
let compactor: JournalCompactor | undefined;

afterEach(() => {
  compactor?.stop();
  store.close();
  cleanup();
});

function setup(clock: FakeClock): void {
  const t = tempDir();
  cleanup = t.cleanup;
  store = openSqliteStore({ dir: t.dir, clock });
  // Offsets 1–3: one succeeded, one dead-lettered, one still open; the checkpoint passes 1 and 2.
  store.batch(() => {
    store.recordIntents([eventIntent(1), eventIntent(2), eventIntent(3)]);
    store.advanceCheckpoint(3);
  });
  store.transition(eventIntent(1).commandId, { to: 'submitted', submissionId: 's1' });
  store.transition(eventIntent(1).commandId, { to: 'succeeded', completionOffset: 4 });
  store.transition(eventIntent(2).commandId, {
    to: 'dead-lettered',
    error: { code: 'X', message: 'final' },
  });
}

describe('JournalCompactor', () => {
  it('deletes finished intents past the retention window, at start and then on its interval', async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 1));
    setup(clock);
    const deleted: number[] = [];
    compactor = new JournalCompactor({
      store,
      clock,
      logger: silentLogger,
      retentionMs: 2 * HOUR,
      onCompacted: (n) => deleted.push(n),
    });
    expect(compactor.intervalMs).toBe(HOUR / 2);
    compactor.start();
    // Too young at start.
    expect(store.getIntent(eventIntent(1).commandId)?.state).toBe('succeeded');
    await clock.advance(1.5 * HOUR);
    expect(store.getIntent(eventIntent(1).commandId)?.state).toBe('succeeded');
    await clock.advance(HOUR);
    // The first half-hourly run after it turned 2 h old deletes it; the dead letter and the open intent stay.
    expect(store.getIntent(eventIntent(1).commandId)).toBeUndefined();
    expect(store.getIntent(eventIntent(2).commandId)?.state).toBe('dead-lettered');
    expect(store.getIntent(eventIntent(3).commandId)?.state).toBe('pending');
    expect(deleted).toEqual([1]);
    compactor.stop();
    await clock.advance(10 * HOUR);
    expect(deleted).toEqual([1]);
  });

  it('runs at most hourly and at least every second, whatever the window', () => {
    const clock = new FakeClock();
    setup(clock);
    const every = (retentionMs: number): number =>
      new JournalCompactor({ store, clock, logger: silentLogger, retentionMs }).intervalMs;
    expect(every(30 * 24 * HOUR)).toBe(HOUR);
    expect(every(100)).toBe(1_000);
  });
});
