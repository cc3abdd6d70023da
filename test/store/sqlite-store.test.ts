import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { IllegalStateError } from '../../src/core/illegal-state-error.js';
import { openSqliteStore, SQLITE_STORE_FILE } from '../../src/store/open-sqlite-store.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite-migrations.js';
import type { IntentChange, Store } from '../../src/store/store.js';
import { StoreError } from '../../src/store/store-error.js';
import { tempDir } from '../support/temp-dir.js';
import { eventIntent } from './store-fixtures.js';

let dir: string;
let cleanup: () => void;
let clock: FakeClock;
let store: Store;

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  clock = new FakeClock();
  store = openSqliteStore({ dir, clock });
});

afterEach(() => {
  store.close();
  cleanup();
});

function reopen(): Store {
  store.close();
  store = openSqliteStore({ dir, clock });
  return store;
}

function finish(commandId: string, to: 'succeeded' | 'duplicate' = 'succeeded'): void {
  store.transition(commandId, { to: 'submitted', submissionId: `sub-${commandId}` });
  store.transition(commandId, { to });
}

describe('opening', () => {
  it('creates the file in WAL mode with the schema from an empty directory', () => {
    expect(existsSync(join(dir, SQLITE_STORE_FILE))).toBe(true);
    store.close();
    const db = new Database(join(dir, SQLITE_STORE_FILE), { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      const versions = db.prepare('SELECT version FROM schema_version').pluck().all();
      expect(versions).toEqual(SQLITE_MIGRATIONS.map((m) => m.version));
    } finally {
      db.close();
    }
    store = openSqliteStore({ dir, clock });
    expect(store.checkpoint()).toBeUndefined();
    expect(store.openIntents()).toEqual([]);
  });

  it('migrates an existing empty file (made by another tool) and reopening applies nothing twice', () => {
    store.close();
    const path = join(dir, 'other.sqlite');
    new Database(path).close();
    store = openSqliteStore({ path, clock });
    store.recordIntents([eventIntent(5)]);
    store = (store.close(), openSqliteStore({ path, clock }));
    expect(store.getIntent('lb-rule-5-0')?.state).toBe('pending');
  });

  it('applies only the missing migrations of an older file', () => {
    store.close();
    const path = join(dir, 'old.sqlite');
    const v1 = SQLITE_MIGRATIONS.filter((m) => m.version === 1);
    openSqliteStore({ path, clock, migrations: v1 }).close();
    const v2 = [...v1, { version: 2, sql: 'CREATE TABLE extra (x INTEGER)' }];
    store = openSqliteStore({ path, clock, migrations: v2 });
    store.close();
    const db = new Database(path, { readonly: true });
    try {
      expect(db.prepare('SELECT version FROM schema_version ORDER BY 1').pluck().all()).toEqual([
        1, 2,
      ]);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'extra'").pluck().get()).toBe(
        'extra',
      );
    } finally {
      db.close();
    }
    store = openSqliteStore({ path, clock, migrations: v2 });
  });

  it('refuses a file from a newer ledgerbot', () => {
    store.close();
    const db = new Database(join(dir, SQLITE_STORE_FILE));
    db.prepare('INSERT INTO schema_version VALUES (99, 0)').run();
    db.close();
    let error: unknown;
    try {
      store = openSqliteStore({ dir, clock });
    } catch (err) {
      error = err;
      store = openSqliteStore({ path: join(dir, 'fresh.sqlite'), clock });
    }
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).code).toBe('STORE_SCHEMA_TOO_NEW');
    const latest = Math.max(...SQLITE_MIGRATIONS.map((m) => m.version));
    expect((error as Error).message).toMatch(
      new RegExp(`schema version 99.*knows only up to ${latest}:`),
    );
    // Read without migrating (state export, dead-letters list): refused the same, not misread.
    expect(() => openSqliteStore({ dir, clock, readonly: true })).toThrow(
      expect.objectContaining({ code: 'STORE_SCHEMA_TOO_NEW' }) as Error,
    );
  });

  it('refuses a file that is not a database, naming it', () => {
    const path = join(dir, 'garbage.sqlite');
    writeFileSync(path, 'this is not a database, just text that is long enough '.repeat(100));
    expect(() => openSqliteStore({ path, clock })).toThrow(
      expect.objectContaining({ code: 'STORE_OPEN_FAILED' }),
    );
    expect(() => openSqliteStore({ path, clock })).toThrow(`cannot open the state store ${path}`);
  });

  it('in exclusive mode, a second writer of the same directory fails instead of sharing it; readers read', () => {
    store.close();
    store = openSqliteStore({ dir, clock, exclusive: true });
    store.recordIntents([eventIntent(1)]);
    expect(() => openSqliteStore({ dir, clock, exclusive: true })).toThrow(
      expect.objectContaining({ code: 'STORE_LOCKED' }),
    );
    const reader = openSqliteStore({ dir, clock, readonly: true });
    try {
      expect(reader.getIntent(eventIntent(1).commandId)?.state).toBe('pending');
      store.recordIntents([eventIntent(2)]);
      expect(reader.listIntents()).toHaveLength(2);
    } finally {
      reader.close();
    }
    // Closing lets the lock go: the next writer gets it.
    store.close();
    store = openSqliteStore({ dir, clock, exclusive: true });
    expect(store.listIntents()).toHaveLength(2);
  });

  it('throws STORE_CLOSED after close, and close is idempotent', () => {
    store.close();
    store.close();
    expect(() => store.checkpoint()).toThrow(expect.objectContaining({ code: 'STORE_CLOSED' }));
    expect(() => store.recordIntents([eventIntent(1)])).toThrow(
      expect.objectContaining({ code: 'STORE_CLOSED' }),
    );
    store = openSqliteStore({ dir, clock });
  });
});

describe('intent lifecycle', () => {
  it('records an intent as pending with every field, and sorts actAs', () => {
    clock.set(1_000);
    const { inserted, existing } = store.recordIntents([
      eventIntent(7, 0, { deadline: 60_000, event: { updateId: 'upd-7' } }),
    ]);
    expect(existing).toEqual([]);
    expect(inserted).toEqual([
      {
        commandId: 'lb-rule-7-0',
        userId: 'ledgerbot',
        actAs: ['Issuer::1220aa', 'Payer::1220bb'],
        ruleId: 'rule',
        revision: 1,
        actionIndex: 0,
        trigger: { kind: 'event', updateId: 'upd-7', nodeId: 0 },
        offset: 7,
        payload: eventIntent(7).payload,
        state: 'pending',
        attempts: 0,
        nextAttemptAt: 1_000,
        deadline: 60_000,
        createdAt: 1_000,
        updatedAt: 1_000,
      },
    ]);
  });

  it('moves pending → submitted → pending (retry) → submitted → succeeded, counting attempts', () => {
    store.recordIntents([eventIntent(1)]);
    const id = 'lb-rule-1-0';
    clock.set(2_000);
    let r = store.transition(id, { to: 'submitted', submissionId: 's1' });
    expect(r).toMatchObject({
      state: 'submitted',
      attempts: 1,
      submissionId: 's1',
      updatedAt: 2_000,
    });
    expect(r.nextAttemptAt).toBeUndefined();
    r = store.transition(id, {
      to: 'pending',
      nextAttemptAt: 5_000,
      error: { code: 'UNAVAILABLE', errorCategory: 1 },
    });
    expect(r).toMatchObject({
      state: 'pending',
      nextAttemptAt: 5_000,
      lastError: { code: 'UNAVAILABLE' },
    });
    r = store.transition(id, { to: 'submitted', submissionId: 's2' });
    expect(r).toMatchObject({
      attempts: 2,
      submissionId: 's2',
      lastError: { code: 'UNAVAILABLE' },
    });
    r = store.transition(id, { to: 'submitted', submissionId: 's3' });
    expect(r).toMatchObject({ attempts: 3, submissionId: 's3' });
    r = store.transition(id, { to: 'succeeded', completionOffset: 12, updateId: 'upd-x' });
    expect(r).toMatchObject({
      state: 'succeeded',
      completionOffset: 12,
      completionUpdateId: 'upd-x',
    });
  });

  it('returns exactly what it stored, for every kind of change', () => {
    store.recordIntents([eventIntent(1, 0, { event: { e: 1 } }), eventIntent(1, 1)]);
    const check = (id: string, change: IntentChange): void => {
      clock.set(clock.now() + 1);
      expect(store.transition(id, change)).toEqual(store.getIntent(id));
    };
    check('lb-rule-1-0', { to: 'submitted', submissionId: 'a' });
    check('lb-rule-1-0', { to: 'pending', nextAttemptAt: 5, error: { code: 'E' } });
    check('lb-rule-1-0', { to: 'submitted', submissionId: 'b' });
    check('lb-rule-1-0', { to: 'succeeded', completionOffset: 9, updateId: 'u' });
    check('lb-rule-1-1', { to: 'submitted', submissionId: 'c' });
    check('lb-rule-1-1', { to: 'dead-lettered', error: { code: 'F' } });
    reopen();
    expect(store.getIntent('lb-rule-1-0')).toMatchObject({
      state: 'succeeded',
      attempts: 2,
      submissionId: 'b',
      lastError: { code: 'E' },
      completionOffset: 9,
      completionUpdateId: 'u',
    });
    expect(store.getIntent('lb-rule-1-0')?.nextAttemptAt).toBeUndefined();
  });

  it('records duplicate and rejected outcomes', () => {
    store.recordIntents([eventIntent(1), eventIntent(1, 1)]);
    store.transition('lb-rule-1-0', { to: 'submitted', submissionId: 's' });
    expect(store.transition('lb-rule-1-0', { to: 'duplicate' }).state).toBe('duplicate');
    const r = store.transition('lb-rule-1-1', {
      to: 'rejected',
      error: { code: 'CONTRACT_NOT_FOUND' },
      completionOffset: 3,
    });
    expect(r).toMatchObject({
      state: 'rejected',
      lastError: { code: 'CONTRACT_NOT_FOUND' },
      completionOffset: 3,
    });
    expect(store.countByState()).toEqual({
      pending: 0,
      submitted: 0,
      succeeded: 0,
      duplicate: 1,
      rejected: 1,
      'dead-lettered': 0,
    });
  });

  it('keeps an existing intent on a replayed record and reports it', () => {
    store.recordIntents([eventIntent(1)]);
    finish('lb-rule-1-0');
    const { inserted, existing } = store.recordIntents([
      eventIntent(1, 0, { payload: { changed: true } }),
      eventIntent(2),
    ]);
    expect(inserted.map((i) => i.commandId)).toEqual(['lb-rule-2-0']);
    expect(existing).toHaveLength(1);
    expect(existing[0]).toMatchObject({ state: 'succeeded', payload: eventIntent(1).payload });
  });

  it('lists open intents oldest offset first and filters listIntents', () => {
    store.recordIntents([eventIntent(9), eventIntent(3), eventIntent(5, 0, { ruleId: 'other' })]);
    finish('lb-rule-9-0');
    expect(store.openIntents().map((i) => i.offset)).toEqual([3, 5]);
    expect(store.openIntents({ limit: 1 }).map((i) => i.offset)).toEqual([3]);
    expect(store.listIntents({ ruleId: 'other' }).map((i) => i.commandId)).toEqual(['lb-rule-5-0']);
    expect(store.listIntents({ states: ['succeeded'] }).map((i) => i.offset)).toEqual([9]);
    expect(store.listIntents({ states: [] })).toEqual([]);
    expect(store.listIntents().map((i) => i.offset)).toEqual([3, 5, 9]);
  });
});

describe('batches', () => {
  it('commits a batch atomically: a throw rolls back every change including the checkpoint', () => {
    store.batch(() => {
      store.recordIntents([eventIntent(1)]);
      store.advanceCheckpoint(1);
    });
    finish('lb-rule-1-0');
    expect(store.checkpoint()).toBe(1);
    expect(() =>
      store.batch(() => {
        store.recordIntents([eventIntent(2)]);
        store.advanceCheckpoint(5);
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(store.getIntent('lb-rule-2-0')).toBeUndefined();
    expect(store.checkpoint()).toBe(1);
    reopen();
    expect(store.checkpoint()).toBe(1);
  });

  it('refuses an async batch function and rolls it back', () => {
    expect(() =>
      store.batch(() => {
        store.recordIntents([eventIntent(1)]);
        return Promise.resolve();
      }),
    ).toThrow(expect.objectContaining({ code: 'STORE_ASYNC_BATCH' }));
    expect(store.getIntent('lb-rule-1-0')).toBeUndefined();
  });

  it('returns the batch function result', () => {
    expect(store.batch(() => 42)).toBe(42);
  });
});

describe('checkpoint low-watermark', () => {
  // The store-neutral cases run over both stores: test/store/store-contract.test.ts.
  it('survives a reopen', () => {
    store.batch(() => {
      store.recordIntents([eventIntent(10)]);
      store.advanceCheckpoint(15);
    });
    reopen();
    expect(store.checkpoint()).toBe(9);
    finish('lb-rule-10-0');
    expect(store.checkpoint()).toBe(15);
  });
});

describe('restart', () => {
  it('brings back non-terminal intents with their payloads, attempts and submissionIds', () => {
    store.batch(() => {
      store.recordIntents([eventIntent(1), eventIntent(2), eventIntent(3)]);
      store.advanceCheckpoint(3);
    });
    store.transition('lb-rule-1-0', { to: 'submitted', submissionId: 'sub-a' });
    finish('lb-rule-2-0');
    store.transition('lb-rule-3-0', { to: 'submitted', submissionId: 'sub-b' });
    store.transition('lb-rule-3-0', { to: 'pending', nextAttemptAt: 99, error: { code: 'E' } });
    reopen();
    const open = store.openIntents();
    expect(open.map((i) => [i.commandId, i.state, i.attempts])).toEqual([
      ['lb-rule-1-0', 'submitted', 1],
      ['lb-rule-3-0', 'pending', 1],
    ]);
    expect(open[0]!.payload).toEqual(eventIntent(1).payload);
    expect(open[0]!.submissionId).toBe('sub-a');
    expect(open[1]).toMatchObject({ nextAttemptAt: 99, lastError: { code: 'E' } });
  });
});

describe('dead letters', () => {
  it('keeps the intent, last error and triggering event; lists; requeues', () => {
    clock.set(10_000);
    store.recordIntents([
      eventIntent(4, 0, { event: { updateId: 'upd-4', offset: 4 }, deadline: 20_000 }),
      eventIntent(5, 0, { ruleId: 'other' }),
    ]);
    store.transition('lb-rule-4-0', { to: 'submitted', submissionId: 's' });
    store.transition('lb-rule-4-0', { to: 'dead-lettered', error: { code: 'INVALID_ARGUMENT' } });
    store.transition('lb-rule-5-0', {
      to: 'dead-lettered',
      error: { code: 'DEADLINE' },
      event: { explicit: true },
    });
    const letters = store.listDeadLetters();
    expect(letters.map((d) => d.intent.commandId)).toEqual(['lb-rule-4-0', 'lb-rule-5-0']);
    expect(letters[0]).toMatchObject({
      error: { code: 'INVALID_ARGUMENT' },
      event: { updateId: 'upd-4', offset: 4 },
      deadLetteredAt: 10_000,
      intent: { state: 'dead-lettered', attempts: 1, lastError: { code: 'INVALID_ARGUMENT' } },
    });
    expect(letters[1]!.event).toEqual({ explicit: true });
    expect(store.listDeadLetters({ ruleId: 'other' })).toHaveLength(1);
    expect(store.listDeadLetters({ limit: 1 })).toHaveLength(1);

    clock.set(50_000);
    const requeued = store.requeueDeadLetter('lb-rule-4-0', { deadline: 90_000 });
    expect(requeued).toMatchObject({
      state: 'pending',
      attempts: 0,
      nextAttemptAt: 50_000,
      deadline: 90_000,
    });
    expect(store.getDeadLetter('lb-rule-4-0')).toBeUndefined();
    expect(store.openIntents().map((i) => i.commandId)).toEqual(['lb-rule-4-0']);
    // The requeued intent runs through the normal lifecycle again.
    finish('lb-rule-4-0');
    expect(store.getIntent('lb-rule-4-0')?.state).toBe('succeeded');
  });

  it('refuses to requeue an intent that is not dead-lettered', () => {
    store.recordIntents([eventIntent(1)]);
    expect(() => store.requeueDeadLetter('lb-rule-1-0')).toThrow(IllegalStateError);
  });

  it('purges a dead letter and its intent, and nothing else', () => {
    store.recordIntents([eventIntent(1), eventIntent(2)]);
    store.transition('lb-rule-1-0', { to: 'dead-lettered', error: {} });
    expect(store.purgeDeadLetter('lb-rule-2-0')).toBe(false);
    expect(store.purgeDeadLetter('lb-rule-1-0')).toBe(true);
    expect(store.getIntent('lb-rule-1-0')).toBeUndefined();
    expect(store.listDeadLetters()).toEqual([]);
    expect(store.getIntent('lb-rule-2-0')?.state).toBe('pending');
  });

  it('survive a reopen', () => {
    store.recordIntents([eventIntent(1)]);
    store.transition('lb-rule-1-0', { to: 'dead-lettered', error: { code: 'X' } });
    reopen();
    expect(store.getDeadLetter('lb-rule-1-0')?.error).toEqual({ code: 'X' });
  });

  it('a dead letter purged and recorded again in one write is the new intent after a reopen', () => {
    store.recordIntents([eventIntent(1)]);
    store.transition('lb-rule-1-0', { to: 'dead-lettered', error: { code: 'X' } });
    reopen();
    store.batch(() => {
      expect(store.purgeDeadLetter('lb-rule-1-0')).toBe(true);
      store.recordIntents([eventIntent(1)]);
    });
    reopen();
    expect(store.getIntent('lb-rule-1-0')).toMatchObject({ state: 'pending', attempts: 0 });
    expect(store.getDeadLetter('lb-rule-1-0')).toBeUndefined();
    expect(store.listDeadLetters()).toEqual([]);
  });
});

describe('compaction', () => {
  it('deletes old finished intents the checkpoint has passed, keeps the rest', () => {
    clock.set(0);
    store.batch(() => {
      store.recordIntents([
        eventIntent(1, 0),
        eventIntent(1, 1),
        eventIntent(1, 2),
        eventIntent(1, 3),
        eventIntent(1, 4),
        eventIntent(20),
      ]);
      store.advanceCheckpoint(10);
    });
    finish('lb-rule-1-0');
    finish('lb-rule-1-1', 'duplicate');
    store.transition('lb-rule-1-2', { to: 'rejected', error: {} });
    store.transition('lb-rule-1-3', { to: 'dead-lettered', error: {} });
    // lb-rule-1-4 stays pending, holding the checkpoint at 0
    finish('lb-rule-20-0');
    clock.set(100_000);
    finish('lb-rule-1-4');
    expect(store.checkpoint()).toBe(10);
    // 1-4 finished at 100_000: too recent. 20-0 is old but beyond the checkpoint.
    expect(store.compact(50_000)).toBe(3);
    expect(
      store
        .listIntents()
        .map((i) => i.commandId)
        .sort(),
    ).toEqual(['lb-rule-1-3', 'lb-rule-1-4', 'lb-rule-20-0']);
    expect(store.listDeadLetters()).toHaveLength(1);
    clock.set(200_000);
    expect(store.compact(50_000)).toBe(1);
    expect(store.compact(50_000)).toBe(0);
  });
});

describe('schedule slots', () => {
  it('marks a slot in progress, completes it, never moves the last completed slot back', () => {
    clock.set(7_000);
    expect(store.getSlotRecord('weekly')).toBeUndefined();
    expect(store.beginSlot('weekly', 1_000, 42)).toEqual({
      ruleId: 'weekly',
      inProgressSlot: 1_000,
      inProgressSince: 7_000,
      snapshotOffset: 42,
    });
    expect(store.completeSlot('weekly', 1_000)).toEqual({
      ruleId: 'weekly',
      lastCompletedSlot: 1_000,
    });
    store.beginSlot('weekly', 2_000);
    expect(store.completeSlot('weekly', 500)).toEqual({
      ruleId: 'weekly',
      lastCompletedSlot: 1_000,
      inProgressSlot: 2_000,
      inProgressSince: 7_000,
    });
    store.completeSlot('daily', 3_000);
    reopen();
    expect(store.listSlotRecords()).toEqual([
      { ruleId: 'daily', lastCompletedSlot: 3_000 },
      { ruleId: 'weekly', lastCompletedSlot: 1_000, inProgressSlot: 2_000, inProgressSince: 7_000 },
    ]);
  });
});

describe('pruning support', () => {
  const contractIntent = (contractId: string, nodeId: number, offset: number) =>
    eventIntent(offset, 0, {
      commandId: `lb-rule-c-${contractId}`,
      trigger: { kind: 'contract', contractId, nodeId },
    });

  it('stores a contract trigger and reads it back as one, across a reopen', () => {
    const [record] = store.recordIntents([contractIntent('00abc', 3, 40)]).inserted;
    expect(record?.trigger).toEqual({ kind: 'contract', contractId: '00abc', nodeId: 3 });
    expect(reopen().getIntent('lb-rule-c-00abc')?.trigger).toEqual({
      kind: 'contract',
      contractId: '00abc',
      nodeId: 3,
    });
    // A replayed record of the same recovery finds it by commandId.
    const again = store.recordIntents([contractIntent('00abc', 3, 40)]);
    expect(again.inserted).toHaveLength(0);
    expect(again.existing.map((r) => r.commandId)).toEqual(['lb-rule-c-00abc']);
  });

  it('hasEventIntent finds an event intent by rule, offset and node id only', () => {
    store.recordIntents([eventIntent(12, 1)]);
    expect(store.hasEventIntent('rule', 12, 1)).toBe(true);
    expect(store.hasEventIntent('rule', 12, 0)).toBe(false);
    expect(store.hasEventIntent('rule', 13, 1)).toBe(false);
    expect(store.hasEventIntent('other-rule', 12, 1)).toBe(false);
    // In any state.
    store.transition('lb-rule-12-1', { to: 'submitted', submissionId: 's1' });
    store.transition('lb-rule-12-1', { to: 'succeeded' });
    expect(store.hasEventIntent('rule', 12, 1)).toBe(true);
    // A recovered (contract) intent justified at offset 20 is not the event at 20 / node 0.
    store.recordIntents([contractIntent('00def', 0, 20)]);
    expect(store.hasEventIntent('rule', 20, 0)).toBe(false);
  });

  it('marks an intent in doubt once an attempt ends without a definite answer', () => {
    const id = 'lb-rule-5-0';
    store.recordIntents([eventIntent(5)]);
    expect(store.getIntent(id)?.inDoubt).toBeUndefined();
    store.transition(id, { to: 'submitted', submissionId: 's1' });
    // A definite rejection: still not in doubt.
    store.transition(id, { to: 'pending', nextAttemptAt: 1, definite: true });
    expect(store.getIntent(id)?.inDoubt).toBeUndefined();
    store.transition(id, { to: 'submitted', submissionId: 's2' });
    // A resubmission over an outstanding attempt (a completion timeout, a restart).
    expect(store.transition(id, { to: 'submitted', submissionId: 's3' }).inDoubt).toBe(true);
    // Sticky, and durable.
    expect(store.transition(id, { to: 'pending', nextAttemptAt: 2, definite: true }).inDoubt).toBe(
      true,
    );
    expect(reopen().getIntent(id)?.inDoubt).toBe(true);

    const other = 'lb-rule-6-0';
    store.recordIntents([eventIntent(6)]);
    store.transition(other, { to: 'submitted', submissionId: 's1' });
    // A retry after an answer that was not definite (a lost response, say).
    expect(store.transition(other, { to: 'pending', nextAttemptAt: 1 }).inDoubt).toBe(true);
  });

  it('migrating a version 1 file counts every intent with an attempt as in doubt', () => {
    store.close();
    const path = join(dir, 'v1.sqlite');
    const v1 = SQLITE_MIGRATIONS.filter((m) => m.version === 1);
    store = openSqliteStore({ path, clock, migrations: v1 });
    store.recordIntents([eventIntent(1), eventIntent(2)]);
    store.transition('lb-rule-1-0', { to: 'submitted', submissionId: 's1' });
    store.transition('lb-rule-1-0', { to: 'pending', nextAttemptAt: 1, definite: true });
    // A store on the old schema still serves everything but the new columns.
    expect(store.getIntent('lb-rule-1-0')?.inDoubt).toBe(true);
    store.close();
    store = openSqliteStore({ path, clock });
    expect(store.getIntent('lb-rule-1-0')?.inDoubt).toBe(true);
    expect(store.getIntent('lb-rule-2-0')?.inDoubt).toBeUndefined();
    expect(store.hasEventIntent('rule', 2, 0)).toBe(true);
  });
});
