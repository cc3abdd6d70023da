import type { TemplateDef } from '../model/model-types.js';
import type {
  CommittedTransaction,
  ContractRecord,
  ExerciseNode,
} from './committed-transaction.js';
import type { ActiveContractsCursor } from './engine-types.js';

/** A contract the ledger knows, and its archive once there is one. */
export type StoredContract = {
  readonly record: ContractRecord;
  archivedOffset: number | null;
  archive: { readonly tx: CommittedTransaction; readonly node: ExerciseNode } | null;
};

/**
 * Every contract the ledger knows (until pruning drops the archived ones): which are active,
 * which hold a key, and the order of creation the active contract set is paged in.
 */
export class ContractStore {
  readonly #contracts = new Map<string, StoredContract>();
  /**
   * The values of #contracts in (creation offset, node id) order, the order of the active contract
   * set, so that a page of it can start where the previous one ended instead of at the beginning.
   */
  #byCreation: StoredContract[] = [];
  readonly #active = new Set<string>();
  readonly #keys = new Map<string, string>();

  /** A contract, active or not; undefined when unknown (or pruned). */
  get(contractId: string): StoredContract | undefined {
    return this.#contracts.get(contractId);
  }

  /** The active contract, or undefined when unknown or archived. */
  active(contractId: string): ContractRecord | undefined {
    return this.#active.has(contractId) ? this.#contracts.get(contractId)?.record : undefined;
  }

  /** The active contract with this key, or undefined. */
  activeByKey(template: TemplateDef, keyText: string): string | undefined {
    return this.#keys.get(keyOf(template, keyText));
  }

  /** Records what a committed transaction created and archived. */
  commit(tx: CommittedTransaction, created: readonly ContractRecord[]): void {
    const added: StoredContract[] = [];
    for (const c of created) {
      const stored: StoredContract = { record: c, archivedOffset: null, archive: null };
      this.#contracts.set(c.contractId, stored);
      added.push(stored);
      this.#active.add(c.contractId);
      if (c.keyText !== null) this.#keys.set(keyOf(c.template, c.keyText), c.contractId);
    }
    // Contracts created and archived within this transaction are recorded as archived, too.
    for (const node of tx.nodes) {
      if (node.kind !== 'exercise' || !node.consuming) continue;
      const id = node.contract.contractId;
      let stored = this.#contracts.get(id);
      if (stored === undefined) {
        stored = { record: node.contract, archivedOffset: null, archive: null };
        this.#contracts.set(id, stored);
        added.push(stored);
      }
      stored.archivedOffset = tx.offset;
      stored.archive = { tx, node };
      this.#active.delete(id);
      const c = node.contract;
      if (c.keyText !== null) {
        const k = keyOf(c.template, c.keyText);
        if (this.#keys.get(k) === id) this.#keys.delete(k);
      }
    }
    // All of them were created at this offset, after every contract already in #byCreation.
    added.sort((a, b) => compareCreation(a.record, b.record));
    this.#byCreation.push(...added);
  }

  /** Drops the contracts archived at or below `offset`. */
  prune(offset: number): void {
    const pruned = (c: StoredContract): boolean =>
      c.archivedOffset !== null && c.archivedOffset <= offset;
    for (const [id, c] of this.#contracts) {
      if (pruned(c)) this.#contracts.delete(id);
    }
    this.#byCreation = this.#byCreation.filter((c) => !pruned(c));
  }

  /**
   * The contracts active at `offset`, in creation order, starting after `after`. Walks from
   * there, so that a page costs what it holds (plus the contracts it skips).
   */
  *activeAt(offset: number, after: ActiveContractsCursor | undefined): Generator<ContractRecord> {
    for (let i = after === undefined ? 0 : this.#firstCreatedAfter(after); ; i++) {
      const stored = this.#byCreation[i];
      if (stored === undefined || stored.record.createdOffset > offset) return;
      if (stored.archivedOffset !== null && stored.archivedOffset <= offset) continue;
      yield stored.record;
    }
  }

  /** The index in #byCreation of the first contract created after `after`. */
  #firstCreatedAfter(after: ActiveContractsCursor): number {
    let lo = 0;
    let hi = this.#byCreation.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = this.#byCreation[mid]!.record;
      if (compareCreation(c, { createdOffset: after.offset, createdNodeId: after.nodeId }) > 0) {
        hi = mid;
      } else lo = mid + 1;
    }
    return lo;
  }
}

function keyOf(template: TemplateDef, keyText: string): string {
  return `${template.templateId}\u0000${keyText}`;
}

type CreationKey = Pick<ContractRecord, 'createdOffset' | 'createdNodeId'>;

function compareCreation(a: CreationKey, b: CreationKey): number {
  return a.createdOffset - b.createdOffset || a.createdNodeId - b.createdNodeId;
}
