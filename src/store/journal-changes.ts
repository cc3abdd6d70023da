import { IllegalStateError } from '../core/illegal-state-error.js';
import {
  changedEntry,
  newEntry,
  purgedEntry,
  requeuedEntry,
  type JournalEntry,
} from './journal-entry.js';
import type { JournalMemory } from './journal-memory.js';
import type { IntentChange, IntentRecord, NewIntent, RecordIntentsResult } from './store.js';
import { StoreError } from './store-error.js';

/**
 * The changes both stores make to memory inside a batch, with the same checks and errors. The
 * store looks the current entry up (memory, or for SQLite also its folded rows) and runs these
 * in its batch, so each `put` has its undo.
 */

/** The intent's entry as the store knows it: memory first, then what the store can look up. */
export type KnownEntry = (commandId: string) => JournalEntry | undefined;

/** Records the intents not known yet; `inserted` is empty when nothing changed. */
export function recordEntries(
  mem: JournalMemory,
  intents: readonly NewIntent[],
  now: number,
  known: KnownEntry,
): RecordIntentsResult {
  const inserted: IntentRecord[] = [];
  const existing: IntentRecord[] = [];
  for (const intent of intents) {
    assertOffset(intent.offset, `offset of ${intent.commandId}`);
    const current = known(intent.commandId);
    if (current !== undefined && !current.deleted) {
      existing.push(current.record);
      continue;
    }
    const entry = newEntry(intent, now, current);
    mem.put(intent.commandId, entry);
    inserted.push(entry.record);
  }
  return { inserted, existing };
}

export function changeEntry(
  mem: JournalMemory,
  current: JournalEntry | undefined,
  commandId: string,
  change: IntentChange,
  now: number,
): IntentRecord {
  if (current === undefined || current.deleted) throw unknownIntent(commandId);
  const next = changedEntry(current, change, now);
  mem.put(commandId, next);
  return next.record;
}

export function requeueEntry(
  mem: JournalMemory,
  current: JournalEntry | undefined,
  commandId: string,
  now: number,
  deadline: number | undefined,
): IntentRecord {
  if (current === undefined || current.deleted) throw unknownIntent(commandId);
  if (current.row.state !== 'dead-lettered') {
    throw new IllegalStateError(
      `intent ${commandId} is ${current.row.state}, not dead-lettered: only dead letters can be requeued`,
    );
  }
  const next = requeuedEntry(current, now, deadline);
  mem.put(commandId, next);
  return next.record;
}

/** False when there is no such dead letter. */
export function purgeEntry(
  mem: JournalMemory,
  current: JournalEntry | undefined,
  commandId: string,
): boolean {
  if (current === undefined || current.deleted || current.row.state !== 'dead-lettered') {
    return false;
  }
  mem.put(commandId, purgedEntry(current));
  return true;
}

export function assertOffset(offset: number, what: string): void {
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new StoreError(
      'STORE_BAD_ARGUMENT',
      `${what} must be a non-negative integer, not ${offset}`,
    );
  }
}

function unknownIntent(commandId: string): StoreError {
  return new StoreError('STORE_UNKNOWN_INTENT', `no intent with commandId ${commandId}`);
}
