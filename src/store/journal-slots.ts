import type { SlotRecord } from './store.js';

/**
 * The schedule slots as the SQLite store keeps them: all in memory (one small record per
 * schedule rule), changed in batches with an undo each, written with the next commit.
 */
export class JournalSlots {
  readonly #slots = new Map<string, SlotRecord>();
  /** Changed since the last write. */
  readonly #changed = new Set<string>();
  readonly #onUndo: (undo: () => void) => void;

  constructor(onUndo: (undo: () => void) => void) {
    this.#onUndo = onUndo;
  }

  get(ruleId: string): SlotRecord | undefined {
    return this.#slots.get(ruleId);
  }

  list(): SlotRecord[] {
    return [...this.#slots.values()].sort((a, b) =>
      a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0,
    );
  }

  begin(ruleId: string, slot: number, now: number, snapshotOffset?: number): SlotRecord {
    const last = this.#slots.get(ruleId)?.lastCompletedSlot;
    return this.#put({
      ruleId,
      ...(last === undefined ? {} : { lastCompletedSlot: last }),
      inProgressSlot: slot,
      inProgressSince: now,
      ...(snapshotOffset === undefined ? {} : { snapshotOffset }),
    });
  }

  /** Never moves the last completed slot back; clears the marker of a slot up to `slot`. */
  complete(ruleId: string, slot: number): SlotRecord {
    const current = this.#slots.get(ruleId);
    const last = Math.max(current?.lastCompletedSlot ?? slot, slot);
    const keep = current?.inProgressSlot !== undefined && current.inProgressSlot > slot;
    return this.#put({ ...(keep ? current : { ruleId }), lastCompletedSlot: last });
  }

  /** The slots changed since the last write. */
  changed(): SlotRecord[] {
    return [...this.#changed].map((ruleId) => this.#slots.get(ruleId)!);
  }

  /** The changed slots are committed. */
  written(): void {
    this.#changed.clear();
  }

  /** Starts over from the file's slots. */
  load(slots: readonly SlotRecord[]): void {
    this.#slots.clear();
    this.#changed.clear();
    for (const s of slots) this.#slots.set(s.ruleId, Object.freeze(s));
  }

  #put(record: SlotRecord): SlotRecord {
    const frozen = Object.freeze(record);
    const ruleId = record.ruleId;
    const before = this.#slots.get(ruleId);
    const wasChanged = this.#changed.has(ruleId);
    this.#slots.set(ruleId, frozen);
    this.#changed.add(ruleId);
    this.#onUndo(() => {
      if (before === undefined) this.#slots.delete(ruleId);
      else this.#slots.set(ruleId, before);
      if (!wasChanged) this.#changed.delete(ruleId);
    });
    return frozen;
  }
}
