import { describe, expect, it } from 'vitest';
import type {
  CommittedTransaction,
  ContractRecord,
  ExerciseNode,
} from '../../../src/sandbox/engine/committed-transaction.js';
import { ContractStore } from '../../../src/sandbox/engine/contract-store.js';
import type { TemplateDef } from '../../../src/sandbox/model/model-types.js';
import { invoicesModel } from './invoice-ledger.js';

const template = [...invoicesModel.templates.values()][0] as TemplateDef;

function contract(id: string, offset: number, nodeId = 0, keyText: string | null = null) {
  return {
    contractId: id,
    template,
    keyText,
    createdOffset: offset,
    createdNodeId: nodeId,
  } as unknown as ContractRecord;
}

function tx(offset: number, archives: ContractRecord[] = []): CommittedTransaction {
  const nodes = archives.map(
    (c, i) =>
      ({ kind: 'exercise', consuming: true, contract: c, nodeId: i }) as unknown as ExerciseNode,
  );
  return { offset, updateId: `u${offset}`, nodes } as unknown as CommittedTransaction;
}

const ids = (it: Iterable<ContractRecord>): string[] => [...it].map((c) => c.contractId);

describe('ContractStore', () => {
  it('tracks active contracts and keys through creates and archives', () => {
    const store = new ContractStore();
    const a = contract('a', 1, 0, 'k1');
    store.commit(tx(1), [a]);
    expect(store.active('a')).toBe(a);
    expect(store.activeByKey(template, 'k1')).toBe('a');
    store.commit(tx(2, [a]), []);
    expect(store.active('a')).toBeUndefined();
    expect(store.activeByKey(template, 'k1')).toBeUndefined();
    expect(store.get('a')?.archivedOffset).toBe(2);
  });

  it('lists the contracts active at an offset in creation order, from a cursor on', () => {
    const store = new ContractStore();
    const [a, b, c] = [contract('a', 1, 1), contract('b', 1, 0), contract('c', 2)];
    store.commit(tx(1), [a, b]);
    store.commit(tx(2), [c]);
    store.commit(tx(3, [b]), []);
    expect(ids(store.activeAt(1, undefined))).toEqual(['b', 'a']);
    expect(ids(store.activeAt(2, undefined))).toEqual(['b', 'a', 'c']);
    expect(ids(store.activeAt(3, undefined))).toEqual(['a', 'c']);
    expect(ids(store.activeAt(3, { offset: 1, nodeId: 1 }))).toEqual(['c']);
  });

  it('records a contract created and archived in one transaction as archived', () => {
    const store = new ContractStore();
    const d = contract('d', 1);
    store.commit(tx(1, [d]), [d]);
    expect(store.active('d')).toBeUndefined();
    expect(store.get('d')?.archivedOffset).toBe(1);
  });

  it('prunes the contracts archived at or below the offset, and only those', () => {
    const store = new ContractStore();
    const [a, b] = [contract('a', 1), contract('b', 1, 1)];
    store.commit(tx(1), [a, b]);
    store.commit(tx(2, [a]), []);
    store.prune(1);
    expect(store.get('a')).toBeDefined();
    store.prune(2);
    expect(store.get('a')).toBeUndefined();
    expect(ids(store.activeAt(1, undefined))).toEqual(['b']);
    expect(store.active('b')).toBe(b);
  });
});
