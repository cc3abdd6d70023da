import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { openSqliteStore, SQLITE_STORE_FILE } from '../../src/store/open-sqlite-store.js';
import { WalCheckpointer } from '../../src/store/wal-checkpointer.js';
import { tempDir } from '../support/temp-dir.js';
import { eventIntent } from './store-fixtures.js';

let dir: string;
let cleanup: () => void;
let db: Database.Database;
let path: string;
const clock = new FakeClock(0);

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  path = join(dir, 'wal.sqlite');
  db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
});
afterEach(() => {
  if (db.open) db.close();
  cleanup();
});

const insert = (rows: number): void => {
  const stmt = db.prepare('INSERT INTO t (body) VALUES (?)');
  db.transaction(() => {
    for (let i = 0; i < rows; i++) stmt.run('x'.repeat(2000));
  })();
};

/** The WAL's frames now, and how many of them are copied into the database file. */
const walState = (): { log: number; checkpointed: number } => {
  // A PASSIVE checkpoint with nothing new to copy reports the WAL as it is.
  const [r] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
  return r!;
};

async function until(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

it('checkpoints on its own thread once asked, and turns the commits’ own checkpoints off', async () => {
  const c = new WalCheckpointer({ db, path, clock, busyTimeoutMs: 1000 });
  insert(50);
  expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  c.afterCommit();
  expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
  await until(() => c.checkpoints === 1, 'the first checkpoint');
  expect(c.walFrames).toBeGreaterThan(20);
  // Everything the WAL held when it began is in the database file now.
  const after = walState();
  expect(after.checkpointed).toBe(after.log);
  c.close();
  expect(c.failure).toBeUndefined();
});

it('asks again only after its interval, and never while a checkpoint runs', async () => {
  const c = new WalCheckpointer({ db, path, clock, busyTimeoutMs: 1000, intervalMs: 100 });
  insert(5);
  c.afterCommit();
  c.afterCommit(); // in flight: not asked twice
  await until(() => c.checkpoints === 1, 'the first checkpoint');
  insert(5);
  c.afterCommit(); // within the interval
  await clock.advance(99);
  c.afterCommit();
  await new Promise((r) => setTimeout(r, 50));
  expect(c.checkpoints).toBe(1);
  await clock.advance(1);
  c.afterCommit();
  await until(() => c.checkpoints === 2, 'the second checkpoint');
  c.close();
});

/**
 * The WAL's frames after: a checkpoint by the thread, a commit it did not copy (made while a
 * reader kept the WAL from restarting: what a writer committing during every checkpoint gets),
 * then one more commit and `afterCommit`, and a last commit.
 */
async function framesAfterAnUncopiedCommit(inlineAtFrames: number): Promise<number> {
  const c = new WalCheckpointer({ db, path, clock, busyTimeoutMs: 1000, inlineAtFrames });
  insert(100);
  const reader = new Database(path, { readonly: true });
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM t').get();
  c.afterCommit();
  await until(() => c.checkpoints === 1, 'the first checkpoint');
  expect(c.walFrames).toBeGreaterThanOrEqual(30);
  insert(10);
  reader.exec('COMMIT');
  reader.close();
  await clock.advance(1000);
  insert(1);
  c.afterCommit();
  insert(1);
  const inline = c.inlineCheckpoints;
  c.close();
  expect(inline).toBe(inlineAtFrames <= c.walFrames ? 1 : 0);
  return walState().log;
}

it('checkpoints once itself when the WAL has reached its bound, so that the next commit restarts the WAL', async () => {
  // The thread's checkpoint is asked after the commit and runs while the writer goes on; the
  // one the writer makes itself copies what came since, and the next commit starts the WAL over.
  expect(await framesAfterAnUncopiedCommit(30)).toBeLessThan(10);
});

it('without that bound the WAL keeps the frames a checkpoint from the thread could not free', async () => {
  expect(await framesAfterAnUncopiedCommit(1_000_000)).toBeGreaterThan(30);
});

it('goes back to SQLite’s checkpoints when the thread cannot open the store', async () => {
  const told: string[] = [];
  const c = new WalCheckpointer({
    db,
    path: join(dir, 'missing', 'nothing.sqlite'),
    clock,
    busyTimeoutMs: 1000,
    onFailure: (reason) => told.push(reason),
  });
  c.afterCommit();
  await until(() => c.failure !== undefined, 'the failure');
  expect(c.failure).toMatch(/could not open the store/);
  // Told once, though the thread also ends after it.
  await new Promise((r) => setTimeout(r, 50));
  expect(told).toEqual([c.failure]);
  expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  // Given up: no more asking, and close has nothing to wait for.
  c.afterCommit();
  c.close();
  expect(c.checkpoints).toBe(0);
});

it('never throws after a commit: a checkpoint that fails gives the thread up instead', async () => {
  const told: string[] = [];
  const c = new WalCheckpointer({
    db,
    path,
    clock,
    busyTimeoutMs: 1000,
    inlineAtFrames: 1,
    onFailure: (reason) => told.push(reason),
  });
  insert(10);
  c.afterCommit();
  await until(() => c.checkpoints === 1, 'the first checkpoint');
  // The writer's own checkpoint is due now; one that throws must not reach the commit.
  db.close();
  expect(() => c.afterCommit()).not.toThrow();
  expect(c.failure).toMatch(/the checkpoints failed: .*not open/);
  expect(told).toEqual([c.failure]);
  c.close();
});

it('a store with the thread closes it first, so that its own close removes the WAL; the data stays', async () => {
  db.close();
  const store = openSqliteStore({ dir, groupCommit: true, checkpointThread: true });
  for (let offset = 1; offset <= 40; offset++) {
    store.batch(() => store.recordIntents([eventIntent(offset, 0), eventIntent(offset, 1)]));
    await new Promise((r) => setImmediate(r));
  }
  store.close();
  expect(existsSync(join(dir, `${SQLITE_STORE_FILE}-wal`))).toBe(false);
  const reopened = openSqliteStore({ dir, readonly: true });
  try {
    expect(reopened.listIntents({ limit: 1000 })).toHaveLength(80);
  } finally {
    reopened.close();
  }
});
