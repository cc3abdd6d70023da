import type { ClientBase } from 'pg';

/**
 * A lease a commit writes under: the rule, and the generation its writes were made under
 * (`LeaseKeeper.holdsFor`: the generation held, 0 for a rule not held, which no lease has). A
 * rule lost and taken again has a new generation, so a generation recorded when the rule's
 * state was loaded refuses writes made from its old state even once the rule is held again.
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
