import type { ClientBase } from 'pg';

/**
 * A lease a commit writes under: the rule, and the generation this instance held it at when the
 * rule's state the commit writes was loaded. The store stamps each rule's pending writes with it
 * (`LeaseKeeper.generationOf` when the rule's state is loaded): a rule lost and taken again has a
 * new generation, so writes made from its old state are refused even though this instance holds
 * the rule again.
 */
export type LeaseHold = { readonly ruleId: string; readonly generation: number };

/**
 * What makes a fleet member's commits safe after it lost its work to another instance: run
 * inside every commit's transaction, before its writes, it throws `StoreError` `STORE_FENCED`
 * unless this instance still holds, at the generation it holds them, the leases the commit
 * writes under (`holds`: one per rule the commit writes for; checked with a row lock, so a
 * takeover cannot commit between the check and the writes). An empty `holds` checks nothing.
 * A store without a fleet has no fence.
 */
export interface CommitFence {
  check(tx: ClientBase, holds: readonly LeaseHold[]): Promise<void>;
}
