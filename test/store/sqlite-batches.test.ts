import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteBatches } from '../../src/store/sqlite-batches.js';
import { StoreError } from '../../src/store/store-error.js';

let db: Database.Database;
/** How often the batches settled (the store recomputes its checkpoint there). */
let settled: number;
/** The group commit the batches asked for, run by the test. */
let pendingCommit: (() => void) | undefined;

function rows(): number {
  return (db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n;
}

function insert(): void {
  db.prepare('INSERT INTO t (v) VALUES (1)').run();
}

beforeEach(() => {
  db = new Database(':memory:');
  db.exec('CREATE TABLE t (v INTEGER NOT NULL)');
  settled = 0;
  pendingCommit = undefined;
});

afterEach(() => {
  db.close();
});

const settle = (): void => {
  settled += 1;
};

describe('SqliteBatches without group commit', () => {
  it('settles once, at the end of the outermost batch, and only when something is unsettled', () => {
    const batches = new SqliteBatches(db, settle, undefined);
    batches.batch(() => insert());
    expect(settled).toBe(0);
    const result = batches.batch(() => {
      batches.batch(() => {
        insert();
        batches.markUnsettled();
      });
      expect(settled).toBe(0);
      return 'done';
    });
    expect(result).toBe('done');
    expect(settled).toBe(1);
    batches.batch(() => insert());
    expect(settled).toBe(1);
    expect(rows()).toBe(3);
  });

  it('rolls a throwing batch back, and refuses a promise', () => {
    const batches = new SqliteBatches(db, settle, undefined);
    expect(() =>
      batches.batch(() => {
        insert();
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(() => batches.batch(() => Promise.resolve(insert()))).toThrow(
      expect.objectContaining({ code: 'STORE_ASYNC_BATCH' }),
    );
    expect(rows()).toBe(0);
  });
});

describe('SqliteBatches with group commit', () => {
  const schedule = (commit: () => void): void => {
    pendingCommit = commit;
  };

  it('joins batches into one transaction, settled once just before it commits', async () => {
    const batches = new SqliteBatches(db, settle, schedule);
    batches.batch(() => {
      insert();
      batches.markUnsettled();
    });
    batches.batch(() => insert());
    expect(db.inTransaction).toBe(true);
    expect(batches.unsettledGroup).toBe(true);
    expect(settled).toBe(0);
    const synced = batches.sync();
    pendingCommit!();
    await synced;
    expect(settled).toBe(1);
    expect(db.inTransaction).toBe(false);
    expect(batches.unsettledGroup).toBe(false);
    expect(rows()).toBe(2);
    await batches.sync();
  });

  it('flush commits at once', () => {
    const batches = new SqliteBatches(db, settle, schedule);
    batches.batch(() => insert());
    batches.flush();
    expect(db.inTransaction).toBe(false);
    // The scheduled commit finds nothing left to do.
    pendingCommit!();
    expect(rows()).toBe(1);
  });

  it('after a failed commit, rolls the group back and refuses every later batch', async () => {
    const failing = (): void => {
      throw new Error('disk full');
    };
    const batches = new SqliteBatches(db, failing, schedule);
    batches.batch(() => {
      insert();
      batches.markUnsettled();
    });
    const synced = batches.sync();
    pendingCommit!();
    await expect(synced).rejects.toMatchObject({ code: 'STORE_COMMIT_FAILED' });
    expect(rows()).toBe(0);
    expect(() => batches.batch(() => insert())).toThrow(StoreError);
    expect(() => batches.flush()).toThrow(/disk full/);
    await expect(batches.sync()).rejects.toBeInstanceOf(StoreError);
  });
});
