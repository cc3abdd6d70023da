import type { ClientBase } from 'pg';

/**
 * What makes a fleet member's commits safe after it lost its work to another instance: run
 * inside every commit's transaction, before its writes, it throws `StoreError` `STORE_FENCED`
 * unless this instance still holds, at the generation it holds them, the leases the commit
 * writes under (checked with a row lock, so a takeover cannot commit between the check and the
 * writes). A store without a fleet has no fence.
 */
export interface CommitFence {
  check(tx: ClientBase): Promise<void>;
}
