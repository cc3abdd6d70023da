import type { JournalCheckpoint } from '../journal-checkpoint.js';
import type { JournalEntry } from '../journal-entry.js';
import type { JournalMemory } from '../journal-memory.js';
import type { JournalSlots } from '../journal-slots.js';
import type { LeaseHold } from './commit-fence.js';
import type { PgCommit } from './pg-journal-writer.js';

export type CollectedPgCommit = {
  readonly commit: PgCommit;
  /** The entries it writes: once it is in, they may leave memory. */
  readonly sent: readonly JournalEntry[];
};

/**
 * A group's changes in memory as one commit (the store marks them written once the writer has
 * taken it); undefined when the group changed nothing. `rules` are a fleet member's (its checkpoint is their rows, so a commit
 * moving it writes under all of their leases); `holdsFor` gives the leases for a set of rules.
 */
export function collectPgCommit(
  mem: JournalMemory,
  slots: JournalSlots,
  checkpoint: JournalCheckpoint,
  rules: readonly string[] | undefined,
  holdsFor: ((ruleIds: ReadonlySet<string>) => readonly LeaseHold[]) | undefined,
): CollectedPgCommit | undefined {
  const cp = checkpoint.changed
    ? { resume: checkpoint.resume, processed: checkpoint.processed }
    : undefined;
  const changedSlots = slots.changed();
  if (mem.changed === 0 && changedSlots.length === 0 && cp === undefined) return undefined;
  const inserts: JournalEntry[] = [];
  const updates: JournalEntry[] = [];
  const deletes: string[] = [];
  const sent: JournalEntry[] = [];
  const ruleIds = new Set<string>();
  for (const e of mem.changedEntries()) {
    sent.push(e);
    ruleIds.add(e.row.rule_id);
    if (e.deleted) deletes.push(e.row.command_id);
    else if (e.factsPending) inserts.push(e);
    else updates.push(e);
  }
  for (const s of changedSlots) ruleIds.add(s.ruleId);
  if (cp !== undefined) for (const id of rules ?? []) ruleIds.add(id);
  const commit: PgCommit = {
    inserts,
    updates,
    deletes,
    slots: changedSlots,
    checkpoint: cp,
    holds: holdsFor?.(ruleIds) ?? [],
  };
  return { commit, sent };
}
