import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { openSqliteStore, SQLITE_STORE_FILE } from '../../src/store/open-sqlite-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { StoreError } from '../../src/store/store-error.js';
import { tempDir } from '../support/temp-dir.js';
import { eventIntent } from './store-fixtures.js';

let dir: string;
let cleanup: () => void;
let store: Store | undefined;
let reader: Database.Database | undefined;

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
});

afterEach(() => {
  store?.close();
  reader?.close();
  store = undefined;
  reader = undefined;
  cleanup();
});

/**
 * What another connection (an operator tool, or the next start after a crash) can see: the
 * intents folded into `intents`, and those only in the log so far.
 */
function committedIntents(): number {
  reader ??= new Database(join(dir, SQLITE_STORE_FILE), { readonly: true });
  return (
    reader
      .prepare(
        'SELECT count(*) AS n FROM (SELECT command_id FROM intents UNION SELECT command_id FROM intent_log)',
      )
      .get() as { n: number }
  ).n;
}

const A = eventIntent(1).commandId;
const B = eventIntent(2).commandId;

function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe('group commit', () => {
  it('commits the batches of one event-loop turn together, at the end of the turn', async () => {
    const s = (store = openSqliteStore({ dir, clock: new FakeClock(), groupCommit: true }));
    s.recordIntents([eventIntent(1)]);
    s.batch(() => {
      s.recordIntents([eventIntent(2)]);
      s.advanceCheckpoint(2);
    });
    s.transition(A, { to: 'submitted', submissionId: 's1' });
    // This connection sees its own changes at once; the checkpoint waits for the open intents.
    expect(s.getIntent(A)?.state).toBe('submitted');
    expect(s.checkpoint()).toBe(0);
    expect(committedIntents()).toBe(0);
    const synced = s.sync();
    await turn();
    await synced;
    expect(committedIntents()).toBe(2);
    // Nothing open: sync resolves at once.
    await s.sync();
  });

  it('rolls back a batch that throws on its own, and the rest of the turn still commits', () => {
    const s = (store = openSqliteStore({ dir, clock: new FakeClock(), groupCommit: true }));
    s.recordIntents([eventIntent(1)]);
    expect(() =>
      s.batch(() => {
        s.recordIntents([eventIntent(2)]);
        throw new Error('half-way');
      }),
    ).toThrow('half-way');
    expect(s.getIntent(B)).toBeUndefined();
    s.flush();
    expect(committedIntents()).toBe(1);
  });

  it('commits what is open when the store closes', () => {
    const s = openSqliteStore({ dir, clock: new FakeClock(), groupCommit: { windowMs: 60_000 } });
    s.recordIntents([eventIntent(1)]);
    s.close();
    expect(committedIntents()).toBe(1);
  });

  it('after a failed commit, rolls the turn back and refuses every later write', async () => {
    ({ dir, cleanup } = (cleanup(), tempDir()));
    openSqliteStore({ dir }).close(); // creates and migrates the file
    const path = join(dir, SQLITE_STORE_FILE);
    const db = new Database(path);
    const commits: (() => void)[] = [];
    const s = (store = SqliteStore.open({
      db,
      clock: new FakeClock(),
      path,
      scheduleCommit: (commit) => commits.push(commit),
    }));
    s.recordIntents([eventIntent(1)]);
    // The disk is full, say: the group's write fails.
    db.exec(
      `CREATE TRIGGER fail BEFORE INSERT ON intent_log BEGIN SELECT RAISE(ABORT, 'disk full'); END`,
    );
    const synced = s.sync();
    commits.shift()!();
    await expect(synced).rejects.toMatchObject({ code: 'STORE_COMMIT_FAILED' });
    expect(committedIntents()).toBe(0);
    // Memory is rolled back with the file: the lost intent is not served as if it were there.
    expect(s.getIntent(A)).toBeUndefined();
    expect(() => s.recordIntents([eventIntent(2)])).toThrow(StoreError);
    await expect(s.sync()).rejects.toMatchObject({ code: 'STORE_COMMIT_FAILED' });
    expect(() => s.flush()).toThrow(/could not commit/);
  });
});
