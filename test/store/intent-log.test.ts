import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { openSqliteStore, SQLITE_STORE_FILE } from '../../src/store/open-sqlite-store.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite-migrations.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';
import { eventIntent } from './store-fixtures.js';

let dir: string;
let cleanup: () => void;
let clock: FakeClock;
let path: string;
const opened: Store[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  clock = new FakeClock();
  path = join(dir, SQLITE_STORE_FILE);
});

afterEach(() => {
  for (const s of opened.splice(0)) s.close();
  cleanup();
});

function open(options: Partial<Parameters<typeof openSqliteStore>[0]> = {}): Store {
  const store = openSqliteStore({ path, clock, ...options } as Parameters<
    typeof openSqliteStore
  >[0]);
  opened.push(store);
  return store;
}

/** Reads the file through another connection, as the next start or an operator tool would. */
function sql<T>(text: string): T[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(text).all() as T[];
  } finally {
    db.close();
  }
}

function logRows(): { command_id: string; state: string; payload: string | null }[] {
  return sql('SELECT command_id, state, payload FROM intent_log ORDER BY seq');
}

/** Everything a store serves, to compare two stores (or one before and after a fold). */
function everything(store: Store): unknown {
  return {
    intents: store.listIntents({ limit: 10_000 }),
    open: store.openIntents(),
    counts: store.countByState(),
    deadLetters: store.listDeadLetters({ limit: 10_000 }),
    checkpoint: store.checkpoint(),
    slots: store.listSlotRecords(),
    eventIntent: [store.hasEventIntent('rule', 4, 0), store.hasEventIntent('rule', 9, 0)],
  };
}

/** A journal with an intent in every state, a requeued and a purged dead letter, and a slot. */
function varied(store: Store): void {
  store.batch(() => {
    store.recordIntents([
      eventIntent(1, 0, { event: { e: 1 } }),
      eventIntent(2),
      eventIntent(3),
      eventIntent(4, 0, { deadline: 9_000 }),
      eventIntent(5),
      eventIntent(6),
      eventIntent(7, 0, {
        commandId: 'lb-sched',
        trigger: { kind: 'slot', slot: 1_000, contractId: null },
      }),
      eventIntent(8, 0, {
        commandId: 'lb-contract',
        trigger: { kind: 'contract', contractId: '00c', nodeId: 2 },
      }),
    ]);
    store.advanceCheckpoint(8);
  });
  clock.set(clock.now() + 10);
  store.transition('lb-rule-1-0', { to: 'submitted', submissionId: 's1' });
  store.transition('lb-rule-1-0', { to: 'succeeded', completionOffset: 11, updateId: 'u' });
  store.transition('lb-rule-2-0', { to: 'submitted', submissionId: 's2' });
  store.transition('lb-rule-2-0', { to: 'pending', nextAttemptAt: 50, error: { code: 'E' } });
  store.transition('lb-rule-3-0', { to: 'rejected', error: { code: 'R' }, completionOffset: 12 });
  store.transition('lb-rule-4-0', { to: 'dead-lettered', error: { code: 'D' } });
  store.transition('lb-rule-5-0', { to: 'dead-lettered', error: { code: 'D' }, event: { x: 5 } });
  store.requeueDeadLetter('lb-rule-5-0', { deadline: 99 });
  store.transition('lb-rule-6-0', { to: 'dead-lettered', error: {} });
  store.purgeDeadLetter('lb-rule-6-0');
  store.transition('lb-sched', { to: 'submitted', submissionId: 's3' });
  store.beginSlot('daily', 1_000, 7);
  store.completeSlot('weekly', 500);
}

describe('the intent log', () => {
  it('writes one row per intent changed in a group: recording and first submission are one row', () => {
    const store = open({ groupCommit: { windowMs: 60_000 } });
    store.batch(() => {
      store.recordIntents([eventIntent(1), eventIntent(2)]);
      store.advanceCheckpoint(2);
    });
    store.transition('lb-rule-1-0', { to: 'submitted', submissionId: 's1' });
    store.transition('lb-rule-2-0', { to: 'submitted', submissionId: 's2' });
    expect(logRows()).toEqual([]);
    store.flush();
    expect(logRows()).toEqual([
      { command_id: 'lb-rule-1-0', state: 'submitted', payload: expect.any(String) as unknown },
      { command_id: 'lb-rule-2-0', state: 'submitted', payload: expect.any(String) as unknown },
    ]);
    expect(sql('SELECT command_id FROM intents')).toEqual([]);
    // A completion is one more row, without the facts.
    store.transition('lb-rule-1-0', { to: 'succeeded' });
    store.flush();
    expect(logRows().slice(2)).toEqual([
      { command_id: 'lb-rule-1-0', state: 'succeeded', payload: null },
    ]);
    expect(sql('SELECT resume_offset FROM checkpoint')).toEqual([{ resume_offset: 1 }]);
  });

  it('serves the same before a fold, from the log replayed, and after folds and reopens', () => {
    const writer = open();
    varied(writer);
    const before = everything(writer);
    expect(logRows().length).toBeGreaterThan(0);
    // A read-only store replays the log without folding it.
    const reader = open({ readonly: true });
    expect(everything(reader)).toEqual(before);
    expect(reader.getDeadLetter('lb-rule-4-0')).toEqual(writer.getDeadLetter('lb-rule-4-0'));
    // Folded by the compaction (retention long enough to delete nothing).
    expect(writer.compact(1_000_000)).toBe(0);
    expect(logRows()).toEqual([]);
    expect(everything(writer)).toEqual(before);
    writer.close();
    const again = open();
    expect(everything(again)).toEqual(before);
    for (const id of ['lb-rule-1-0', 'lb-rule-2-0', 'lb-rule-4-0', 'lb-sched', 'lb-contract']) {
      expect(again.getIntent(id)).toEqual(
        (before as { intents: { commandId: string }[] }).intents.find((i) => i.commandId === id),
      );
    }
    expect(again.getIntent('lb-rule-6-0')).toBeUndefined();
    // A replay after the restart finds the folded intents, in any state, and records the new one.
    const replayed = again.recordIntents([eventIntent(1), eventIntent(3), eventIntent(9)]);
    expect(replayed.existing.map((i) => [i.commandId, i.state])).toEqual([
      ['lb-rule-1-0', 'succeeded'],
      ['lb-rule-3-0', 'rejected'],
    ]);
    expect(replayed.inserted.map((i) => i.commandId)).toEqual(['lb-rule-9-0']);
    expect(sql('SELECT command_id FROM dead_letters')).toEqual([{ command_id: 'lb-rule-4-0' }]);
  });

  it('folds once the log passes its bound, and hands out frozen records', () => {
    const store = open({ foldAfterLogRows: 5 });
    for (let offset = 1; offset <= 12; offset++) {
      store.batch(() => {
        store.recordIntents([eventIntent(offset)]);
        store.advanceCheckpoint(offset);
      });
      expect(logRows().length).toBeLessThanOrEqual(5);
    }
    expect(sql('SELECT count(*) AS n FROM intents')).toEqual([{ n: 12 - logRows().length }]);
    const record = store.getIntent('lb-rule-12-0')!;
    expect(Object.isFrozen(record)).toBe(true);
    expect(Object.isFrozen(record.payload)).toBe(true);
    expect(() => {
      (record.payload as { commandId: string }).commandId = 'changed';
    }).toThrow(TypeError);
    expect(store.openIntents()).toHaveLength(12);
    expect(store.countByState().pending).toBe(12);
  });

  it('undoes a batch that throws in memory and on disk, a nested one alone', () => {
    const store = open();
    store.batch(() => {
      store.recordIntents([eventIntent(1)]);
      store.advanceCheckpoint(1);
    });
    store.beginSlot('daily', 100);
    const committed = everything(store);
    const rows = logRows();
    expect(() =>
      store.batch(() => {
        store.transition('lb-rule-1-0', { to: 'submitted', submissionId: 's' });
        store.recordIntents([eventIntent(2)]);
        store.advanceCheckpoint(2);
        store.completeSlot('daily', 100);
        store.resetCheckpoint(50);
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(everything(store)).toEqual(committed);
    expect(logRows()).toEqual(rows);
    store.batch(() => {
      store.recordIntents([eventIntent(3)]);
      expect(() =>
        store.batch(() => {
          store.transition('lb-rule-3-0', { to: 'submitted', submissionId: 's' });
          store.recordIntents([eventIntent(4)]);
          throw new Error('inner');
        }),
      ).toThrow('inner');
    });
    expect(store.getIntent('lb-rule-3-0')?.state).toBe('pending');
    expect(store.getIntent('lb-rule-4-0')).toBeUndefined();
    // The checkpoint is held by the oldest open event again, as before the throw.
    store.transition('lb-rule-1-0', { to: 'submitted', submissionId: 's' });
    store.transition('lb-rule-1-0', { to: 'succeeded' });
    store.advanceCheckpoint(5);
    expect(store.checkpoint()).toBe(2);
    const after = everything(store);
    store.close();
    expect(everything(open())).toEqual(after);
  });
});

describe('a read-only store', () => {
  it('replays the writer’s log, again after each of its commits, and refuses writes', () => {
    const writer = open();
    writer.recordIntents([eventIntent(1)]);
    const reader = open({ readonly: true });
    expect(reader.getIntent('lb-rule-1-0')?.state).toBe('pending');
    writer.transition('lb-rule-1-0', { to: 'submitted', submissionId: 's' });
    writer.recordIntents([eventIntent(2)]);
    expect(reader.getIntent('lb-rule-1-0')?.state).toBe('submitted');
    expect(reader.openIntents().map((i) => i.commandId)).toEqual(['lb-rule-1-0', 'lb-rule-2-0']);
    // A fold by the writer moves the rows; the reader sees the same journal.
    writer.compact(1_000_000);
    expect(everything(reader)).toEqual(everything(writer));
    const rows = logRows();
    expect(() => reader.recordIntents([eventIntent(3)])).toThrow(
      expect.objectContaining({ code: 'STORE_READ_ONLY' }),
    );
    expect(() => reader.recordIntents([eventIntent(3)])).toThrow(`${path} is open read-only`);
    expect(() => reader.compact(0)).toThrow(expect.objectContaining({ code: 'STORE_READ_ONLY' }));
    expect(logRows()).toEqual(rows);
    expect(writer.getIntent('lb-rule-3-0')).toBeUndefined();
  });
});

describe('schema version 3', () => {
  it('opens a version 2 state directory: its rows are the folded journal, and it goes on', () => {
    const v2 = SQLITE_MIGRATIONS.filter((m) => m.version <= 2);
    const old = open({ migrations: v2 });
    varied(old);
    const before = everything(old);
    old.close();
    expect(sql('SELECT version FROM schema_version ORDER BY 1')).toEqual([
      { version: 1 },
      { version: 2 },
    ]);
    expect(sql("SELECT name FROM sqlite_master WHERE name = 'intent_log'")).toEqual([]);
    const store = open();
    expect(sql('SELECT version FROM schema_version ORDER BY 1')).toEqual(
      SQLITE_MIGRATIONS.map((m) => ({ version: m.version })),
    );
    expect(everything(store)).toEqual(before);
    store.transition('lb-rule-2-0', { to: 'submitted', submissionId: 's9' });
    store.transition('lb-rule-2-0', { to: 'succeeded' });
    store.requeueDeadLetter('lb-rule-4-0');
    expect(logRows().map((r) => [r.command_id, r.state, r.payload])).toEqual([
      ['lb-rule-2-0', 'submitted', null],
      ['lb-rule-2-0', 'succeeded', null],
      ['lb-rule-4-0', 'pending', null],
    ]);
    const after = everything(store);
    store.close();
    expect(everything(open())).toEqual(after);
    expect(sql('SELECT command_id FROM dead_letters')).toEqual([]);
  });

  it.each([
    [
      'a change of an intent it does not have',
      `INSERT INTO intent_log (command_id, state, attempts, updated_at, in_doubt)
       VALUES ('lb-nobody', 'submitted', 1, 0, 0)`,
      /intent lb-nobody\): a change of an intent the journal does not have/,
    ],
    [
      'an unknown state',
      `INSERT INTO intent_log (command_id, state, attempts, updated_at, in_doubt)
       VALUES ('lb-rule-1-0', 'exploded', 1, 0, 0)`,
      /unknown state "exploded"/,
    ],
    [
      'a payload that is not JSON',
      `INSERT INTO intent_log (command_id, state, attempts, updated_at, in_doubt, user_id, act_as,
         rule_id, revision, action_index, trigger_kind, justifying_offset, payload, created_at)
       VALUES ('lb-x', 'pending', 0, 0, 0, 'u', '[]', 'r', 1, 0, 'event', 3, '{not json', 0)`,
      /intent lb-x\)/,
    ],
  ])('refuses a log row with %s, naming the file', (_, insert, why) => {
    open().recordIntents([eventIntent(1)]);
    opened.pop()!.close();
    const db = new Database(path);
    db.exec(insert);
    db.close();
    expect(() => open()).toThrow(expect.objectContaining({ code: 'STORE_CORRUPT' }));
    expect(() => open()).toThrow(`the state store ${path} has an unreadable journal row`);
    expect(() => open()).toThrow(why);
    expect(() => open({ readonly: true }).checkpoint()).toThrow(
      expect.objectContaining({ code: 'STORE_CORRUPT' }),
    );
  });
});
