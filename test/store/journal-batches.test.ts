import { beforeEach, describe, expect, it } from 'vitest';
import { JournalBatches } from '../../src/store/journal-batches.js';
import { StoreError } from '../../src/store/store-error.js';

/** A journal in memory: the values changed in batches, and those written. */
let values: number[];
let written: number[][];
let settled: number;
let failWrite: boolean;
/** The group commit the batches asked for, run by the test. */
let pendingCommit: (() => void) | undefined;

const hooks = {
  settle: (): void => {
    settled += 1;
  },
  write: (): void => {
    if (failWrite) throw new Error('disk full');
    written.push([...values]);
  },
};

function push(batches: JournalBatches, v: number): void {
  values.push(v);
  batches.onUndo(() => values.pop());
}

beforeEach(() => {
  values = [];
  written = [];
  settled = 0;
  failWrite = false;
  pendingCommit = undefined;
});

describe('JournalBatches without group commit', () => {
  it('writes and settles once, at the end of the outermost batch, settling only when unsettled', () => {
    const batches = new JournalBatches(hooks, undefined);
    batches.batch(() => push(batches, 1));
    expect(written).toEqual([[1]]);
    expect(settled).toBe(0);
    const result = batches.batch(() => {
      batches.batch(() => {
        push(batches, 2);
        batches.markUnsettled();
      });
      expect(settled).toBe(0);
      expect(written).toHaveLength(1);
      return 'done';
    });
    expect(result).toBe('done');
    expect(settled).toBe(1);
    expect(written).toEqual([[1], [1, 2]]);
  });

  it('undoes a throwing batch down to where it began, nested ones alone, and refuses a promise', () => {
    const batches = new JournalBatches(hooks, undefined);
    batches.batch(() => {
      push(batches, 1);
      expect(() =>
        batches.batch(() => {
          push(batches, 2);
          throw new Error('inner');
        }),
      ).toThrow('inner');
      expect(values).toEqual([1]);
      push(batches, 3);
    });
    expect(written).toEqual([[1, 3]]);
    expect(() =>
      batches.batch(() => {
        push(batches, 4);
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(() => batches.batch(() => Promise.resolve(push(batches, 5)))).toThrow(
      expect.objectContaining({ code: 'STORE_ASYNC_BATCH' }),
    );
    expect(values).toEqual([1, 3]);
  });

  it('undoes a batch whose write failed, and the next batch goes on', () => {
    const batches = new JournalBatches(hooks, undefined);
    failWrite = true;
    expect(() => batches.batch(() => push(batches, 1))).toThrow('disk full');
    expect(values).toEqual([]);
    failWrite = false;
    batches.batch(() => push(batches, 2));
    expect(written).toEqual([[2]]);
  });
});

describe('JournalBatches with group commit', () => {
  const schedule = (commit: () => void): void => {
    pendingCommit = commit;
  };

  it('joins batches into one write, settled once just before it', async () => {
    const batches = new JournalBatches(hooks, schedule);
    batches.batch(() => {
      push(batches, 1);
      batches.markUnsettled();
    });
    batches.batch(() => push(batches, 2));
    expect(batches.unwritten).toBe(true);
    expect(batches.unsettledGroup).toBe(true);
    expect(settled).toBe(0);
    expect(written).toEqual([]);
    const synced = batches.sync();
    pendingCommit!();
    await synced;
    expect(settled).toBe(1);
    expect(batches.unwritten).toBe(false);
    expect(batches.unsettledGroup).toBe(false);
    expect(written).toEqual([[1, 2]]);
    await batches.sync();
  });

  it('flush writes at once', () => {
    const batches = new JournalBatches(hooks, schedule);
    batches.batch(() => push(batches, 1));
    batches.flush();
    expect(batches.unwritten).toBe(false);
    // The scheduled commit finds nothing left to do.
    pendingCommit!();
    expect(written).toEqual([[1]]);
  });

  it('after a failed write, undoes the whole group and refuses every later batch', async () => {
    const batches = new JournalBatches(hooks, schedule);
    batches.batch(() => push(batches, 1));
    batches.batch(() => push(batches, 2));
    failWrite = true;
    const synced = batches.sync();
    pendingCommit!();
    await expect(synced).rejects.toMatchObject({ code: 'STORE_COMMIT_FAILED' });
    expect(values).toEqual([]);
    expect(batches.failed).toBe(true);
    expect(() => batches.batch(() => push(batches, 3))).toThrow(StoreError);
    expect(() => batches.flush()).toThrow(/disk full/);
    await expect(batches.sync()).rejects.toBeInstanceOf(StoreError);
  });
});
