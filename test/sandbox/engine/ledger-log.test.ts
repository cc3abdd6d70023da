import { describe, expect, it } from 'vitest';
import type { CommittedTransaction } from '../../../src/sandbox/engine/committed-transaction.js';
import type { LogEntry } from '../../../src/sandbox/engine/engine-types.js';
import { LedgerLog } from '../../../src/sandbox/engine/ledger-log.js';

function tx(offset: number): LogEntry {
  const transaction = { updateId: `u${offset}`, offset } as unknown as CommittedTransaction;
  return { kind: 'transaction', offset, transaction };
}

function completion(offset: number): LogEntry {
  return { kind: 'completion', offset, completion: { offset } as never };
}

describe('LedgerLog', () => {
  it('keeps entries in order, indexed by offset and update id, and tells listeners', () => {
    const log = new LedgerLog();
    const seen: number[] = [];
    const unsubscribe = log.subscribe((e) => seen.push(e.offset));
    log.append(tx(1));
    log.append(completion(2));
    unsubscribe();
    log.append(tx(3));
    expect(seen).toEqual([1, 2]);
    expect(log.end).toBe(3);
    expect(log.entriesBetween(1, 3).map((e) => e.offset)).toEqual([2, 3]);
    expect(log.transactionsBetween(0, 3).map((t) => t.offset)).toEqual([1, 3]);
    expect(log.transactionByOffset(3)?.updateId).toBe('u3');
    expect(log.transactionById('u1')?.offset).toBe(1);
    expect(log.transactionByOffset(2)).toBeUndefined();
  });

  it('reads at most `limit` transactions of a range, the first ones or, descending, the last ones', () => {
    const log = new LedgerLog();
    // A transaction and its completion share an offset; a rejection has one of its own.
    for (const e of [tx(1), completion(1), completion(2), tx(3), completion(3), tx(4), tx(5)]) {
      log.append(e);
    }
    const offsets = (txs: readonly CommittedTransaction[]) => txs.map((t) => t.offset);
    expect(offsets(log.transactionsBetween(0, 5, 2))).toEqual([1, 3]);
    expect(offsets(log.transactionsBetween(1, 4))).toEqual([3, 4]);
    expect(offsets(log.transactionsBetween(0, 5, 2, true))).toEqual([5, 4]);
    expect(offsets(log.transactionsBetween(0, 3, 10, true))).toEqual([3, 1]);
    expect(offsets(log.transactionsBetween(1, 4, 10, true))).toEqual([4, 3]);
    expect(offsets(log.transactionsBetween(5, 5, 10, true))).toEqual([]);
  });

  it('indexes a transaction before its listeners hear of it', () => {
    const log = new LedgerLog();
    let found: unknown;
    log.subscribe((e) => (found = log.transactionByOffset(e.offset)));
    log.append(tx(1));
    expect(found).toBeDefined();
  });

  it('prunes a prefix once, and refuses reads outside the kept range', () => {
    const log = new LedgerLog();
    for (let o = 1; o <= 4; o++) log.append(tx(o));
    expect(log.prune(2)).toBe(true);
    expect(log.prune(2)).toBe(false);
    expect(log.prunedUpTo).toBe(2);
    expect(log.entriesBetween(0, 4).map((e) => e.offset)).toEqual([3, 4]);
    expect(log.transactionById('u2')).toBeUndefined();
    expect(log.checkOffset(1, 'beginExclusive')?.code).toBe('PARTICIPANT_PRUNED_DATA_ACCESSED');
    expect(log.checkOffset(2, 'beginExclusive')).toBeNull();
    expect(log.checkOffset(4, 'endInclusive')).toBeNull();
    const after = log.checkOffset(5, 'endInclusive');
    expect(after?.code).toBe('OFFSET_AFTER_LEDGER_END');
    expect(after?.context).toMatchObject({ offset: '5', ledger_end: '4' });
  });
});
