import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';
import { eventIntent } from './store-fixtures.js';

let a: TempDir;
let b: TempDir;

beforeEach(() => {
  a = tempDir();
  b = tempDir();
});

afterEach(() => {
  a.cleanup();
  b.cleanup();
});

describe('the SQLite store as a JournalTransfer', () => {
  it('imports into an empty store, after which it works as the bot left it', async () => {
    const clock = new FakeClock();
    const source = openSqliteStore({ dir: a.dir, clock });
    source.recordIntents([eventIntent(7), eventIntent(9)]);
    source.transition('lb-rule-7-0', { to: 'submitted', submissionId: 's-7' });
    source.advanceCheckpoint(20);
    const journal = await source.exportJournal();
    source.close();

    const target = openSqliteStore({ dir: b.dir, clock });
    await target.importJournal(journal);
    expect(target.checkpoint()).toBe(6);
    expect(target.openIntents().map((i) => i.commandId)).toEqual(['lb-rule-7-0', 'lb-rule-9-0']);
    // The imported intents are in memory: they change, and the checkpoint follows them.
    target.transition('lb-rule-7-0', { to: 'succeeded' });
    target.transition('lb-rule-9-0', { to: 'rejected', error: { code: 'X' } });
    expect(target.checkpoint()).toBe(20);
    target.close();
  });

  it('refuses a store that is not empty, a journal naming an intent twice, a read-only store', async () => {
    const store = openSqliteStore({ dir: a.dir, clock: new FakeClock() });
    store.recordIntents([eventIntent(7)]);
    const journal = await store.exportJournal();
    await expect(store.importJournal({ intents: [], slots: [] })).rejects.toMatchObject({
      code: 'STORE_NOT_EMPTY',
    });
    store.close();

    const empty = openSqliteStore({ dir: b.dir, clock: new FakeClock() });
    const twice = { ...journal, intents: [...journal.intents, ...journal.intents] };
    await expect(empty.importJournal(twice)).rejects.toMatchObject({ code: 'STORE_BAD_ARGUMENT' });
    expect(await empty.exportJournal()).toEqual({ intents: [], slots: [] });
    empty.close();

    const readOnly = openSqliteStore({ dir: b.dir, readonly: true });
    await expect(readOnly.importJournal(journal)).rejects.toMatchObject({
      code: 'STORE_READ_ONLY',
    });
    readOnly.close();
  });
});
