import { holdsCheckpoint, isOpenEntry, type JournalEntry } from './journal-entry.js';
import { OpenEventOffsets } from './open-event-offsets.js';
import type { IntentRecord } from './store.js';

/**
 * The intents a store keeps in memory, with what is owed to the database (changed since the
 * last write; for SQLite also: in the log since the last fold) and the indexes the store reads
 * them by (the open offsets that hold the checkpoint, the event intents). Which intents stay is
 * the store's rule: SQLite keeps every open intent and every intent changed since the last fold,
 * PostgreSQL those it cannot look up synchronously (see PgStore). `put` registers its undo with
 * the running batch.
 */
export class JournalMemory {
  readonly #entries = new Map<string, JournalEntry>();
  readonly #onUndo: (undo: () => void) => void;
  /** Changed since the last write. */
  readonly #dirty = new Set<string>();
  /** With rows in `intent_log`. */
  readonly #inLog = new Set<string>();
  #logRows = 0;
  readonly #offsets = new OpenEventOffsets();
  /** `ruleId \0 offset \0 nodeId` of the event intents in memory, for `hasEventIntent`. */
  readonly #eventKeys = new Map<string, string>();

  constructor(onUndo: (undo: () => void) => void) {
    this.#onUndo = onUndo;
  }

  get(commandId: string): JournalEntry | undefined {
    return this.#entries.get(commandId);
  }

  has(commandId: string): boolean {
    return this.#entries.has(commandId);
  }

  /** How many folded rows memory may shadow. */
  get size(): number {
    return this.#entries.size;
  }

  values(): IterableIterator<JournalEntry> {
    return this.#entries.values();
  }

  /** Rows in the log since the last fold. */
  get logRows(): number {
    return this.#logRows;
  }

  get changed(): number {
    return this.#dirty.size;
  }

  /** Replaces an intent's entry for the running batch, with its undo. */
  put(commandId: string, next: JournalEntry): void {
    const before = this.#entries.get(commandId);
    const wasDirty = this.#dirty.has(commandId);
    this.#set(commandId, next);
    this.#dirty.add(commandId);
    this.#onUndo(() => {
      this.#set(commandId, before);
      if (!wasDirty) this.#dirty.delete(commandId);
    });
  }

  /** An entry read from the file at open: neither changed nor undoable. */
  load(commandId: string, entry: JournalEntry, fromLog: boolean): void {
    this.#set(commandId, entry);
    if (!fromLog) return;
    this.#inLog.add(commandId);
    this.#logRows += 1;
  }

  /** The entries changed since the last write, each to be written once. */
  *changedEntries(): Generator<JournalEntry> {
    for (const id of this.#dirty) yield this.#entries.get(id)!;
  }

  /** The entries a fold writes: those in the log and those changed since. */
  *unfoldedEntries(): Generator<JournalEntry> {
    for (const id of this.#unfoldedIds()) yield this.#entries.get(id)!;
  }

  /**
   * The changed entries are on their way to the database (a remote store's commit, which
   * writes each whole row): nothing is owed for them unless they change again.
   */
  sent(): void {
    for (const id of this.#dirty) this.#entries.get(id)!.factsPending = false;
    this.#dirty.clear();
  }

  /** Whether the entry changed since the last write (or send). */
  isDirty(commandId: string): boolean {
    return this.#dirty.has(commandId);
  }

  /** Drops a committed entry memory no longer needs to hold (not undoable: outside batches). */
  forget(commandId: string): void {
    const e = this.#entries.get(commandId);
    if (e === undefined || this.#dirty.has(commandId)) return;
    this.#set(commandId, undefined);
    const key = eventKeyOf(e);
    if (key !== undefined && this.#eventKeys.get(key) === commandId) this.#eventKeys.delete(key);
  }

  /** The changed entries are in the log now (committed). */
  logged(): void {
    for (const id of this.#dirty) {
      this.#entries.get(id)!.factsPending = false;
      this.#inLog.add(id);
    }
    this.#logRows += this.#dirty.size;
    this.#dirty.clear();
  }

  /**
   * The log is folded (committed): only open intents stay, as `keep` makes them (the folded
   * form now has them).
   */
  folded(keep: (e: JournalEntry) => JournalEntry): void {
    for (const id of this.#unfoldedIds()) {
      const e = this.#entries.get(id)!;
      if (isOpenEntry(e)) {
        this.#entries.set(id, keep(e));
        continue;
      }
      this.#entries.delete(id);
      const key = eventKeyOf(e);
      if (key !== undefined && this.#eventKeys.get(key) === id) this.#eventKeys.delete(key);
    }
    this.#inLog.clear();
    this.#dirty.clear();
    this.#logRows = 0;
  }

  /** The lowest offset above `bound` of an open intent that holds the checkpoint. */
  lowestOpenAbove(bound: number): number | undefined {
    return this.#offsets.lowestAbove(bound);
  }

  /** After the checkpoint went down (see OpenEventOffsets). */
  rebuildOffsets(): void {
    this.#offsets.rebuild();
  }

  /** Whether memory has a live event intent of the rule at offset / node id. */
  hasEvent(ruleId: string, offset: number, nodeId: number): boolean {
    const id = this.#eventKeys.get(eventKey(ruleId, offset, nodeId));
    const entry = id === undefined ? undefined : this.#entries.get(id);
    return entry !== undefined && !entry.deleted;
  }

  openRecords(): IntentRecord[] {
    const open: IntentRecord[] = [];
    for (const e of this.#entries.values()) if (isOpenEntry(e)) open.push(e.record);
    return open;
  }

  clear(): void {
    this.#entries.clear();
    this.#dirty.clear();
    this.#inLog.clear();
    this.#logRows = 0;
    this.#offsets.clear();
    this.#eventKeys.clear();
  }

  #unfoldedIds(): Set<string> {
    return new Set([...this.#inLog, ...this.#dirty]);
  }

  #set(commandId: string, next: JournalEntry | undefined): void {
    const before = this.#entries.get(commandId);
    if (before !== undefined && holdsCheckpoint(before)) {
      this.#offsets.remove(before.row.justifying_offset);
    }
    if (next === undefined) {
      this.#entries.delete(commandId);
      return;
    }
    this.#entries.set(commandId, next);
    if (holdsCheckpoint(next)) this.#offsets.add(next.row.justifying_offset);
    const key = eventKeyOf(next);
    if (key !== undefined) this.#eventKeys.set(key, commandId);
  }
}

function eventKeyOf(e: JournalEntry): string | undefined {
  const row = e.row;
  if (row.trigger_kind !== 'event' || row.trigger_update_id === null) return undefined;
  return eventKey(row.rule_id, row.justifying_offset, row.trigger_node_id ?? 0);
}

function eventKey(ruleId: string, offset: number, nodeId: number): string {
  return `${ruleId}\u0000${offset}\u0000${nodeId}`;
}
