import type { ClientBase } from 'pg';
import { StoreError } from '../store-error.js';
import type { CommitFence, LeaseHold } from './commit-fence.js';
import { checkSchemaName, quoteIdentifier } from './quote-identifier.js';

/** What the fence asks of the instance's lease keeper (`LeaseKeeper` is one). */
export type LeaseFenceSource = {
  readonly schema: string;
  readonly instanceId: string;
  /** Whether the keeper holds `hold` at its generation and within its time, by its own clock. */
  isValid(hold: LeaseHold): boolean;
  /** Leases the fence found lost: the keeper forgets them and reports them at once. */
  lost(holds: readonly LeaseHold[]): void;
};

/**
 * The commit fence of a fleet member. First without a round trip: a lease the keeper knows lost
 * or past its time refuses the commit (a process that was paused learns it from its own clock
 * before anything else). Then in the database, inside the commit's transaction: the lease rows
 * the commit writes under must still name this instance and the generation the writes were
 * made under, and `FOR SHARE` locks them until the commit ends, so a take-over (an UPDATE of the
 * row) waits for this commit, and the new owner reads its state after it. Any lease not held
 * throws `StoreError` `STORE_FENCED`, and nothing of the commit is written.
 */
export function leaseFence(source: LeaseFenceSource): CommitFence {
  const leases = `${quoteIdentifier(checkSchemaName(source.schema))}.lb_fleet_leases`;
  return {
    async check(tx: ClientBase, holds: readonly LeaseHold[]): Promise<void> {
      if (holds.length === 0) return;
      const stale = holds.filter((h) => !source.isValid(h));
      if (stale.length > 0) {
        source.lost(stale);
        throw fenced(stale);
      }
      const { rows } = await tx.query<{ rule_id: string }>(
        `SELECT l.rule_id FROM ${leases} AS l
           JOIN unnest($1::text[], $2::bigint[]) AS h(rule_id, generation)
             ON l.rule_id = h.rule_id AND l.generation = h.generation
          WHERE l.owner = $3
          FOR SHARE OF l`,
        [holds.map((h) => h.ruleId), holds.map((h) => h.generation), source.instanceId],
      );
      const held = new Set(rows.map((r) => r.rule_id));
      const lost = holds.filter((h) => !held.has(h.ruleId));
      if (lost.length > 0) {
        source.lost(lost);
        throw fenced(lost);
      }
    },
  };
}

function fenced(lost: readonly LeaseHold[]): StoreError {
  const shown = lost
    .slice(0, 5)
    .map((h) => `"${h.ruleId}" (generation ${h.generation})`)
    .join(', ');
  const more = lost.length > 5 ? ` and ${lost.length - 5} more` : '';
  return new StoreError(
    'STORE_FENCED',
    `this instance no longer holds the lease of rule ${shown}${more}: another instance may have taken it over, so this commit is refused`,
  );
}
