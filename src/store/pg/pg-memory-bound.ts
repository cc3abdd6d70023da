import { isOpenEntry, type JournalEntry } from '../journal-entry.js';
import type { JournalMemory } from '../journal-memory.js';
import type { JournalSlots } from '../journal-slots.js';
import { isTerminal, type NewIntent } from '../store.js';

/**
 * What the PostgreSQL store's memory holds (the synchronous reads the hot path makes are
 * answered from it):
 * - every open intent and every dead letter (the runtime requeues and reads them synchronously);
 * - every event intent above the checkpoint (a replay re-records exactly those) and every slot
 *   intent of a slot not completed yet (a re-run slot re-records those);
 * - every intent changed since open, until it is terminal, its last change is committed AND the
 *   checkpoint (or its rule's last completed slot) has passed it; then it is dropped.
 * So memory is bounded by the open intents, the dead letters and the intents since the lowest
 * open one, not by the journal.
 *
 * This is the rule for what memory may drop: a finished intent whose
 * last change is committed, once the committed checkpoint has passed its event (a replay starts
 * above it, so nothing asks for it synchronously again), or, for a slot intent, once its rule's
 * last completed slot has passed its slot (a completed slot is not re-run). Dead letters stay
 * (the runtime requeues and reads them synchronously), and open intents of course.
 */
export class PgMemoryBound {
  readonly #mem: JournalMemory;
  readonly #slots: JournalSlots;
  /** Finished (or purged) entries whose last change is committed, until they can go. */
  readonly #held = new Map<string, JournalEntry>();
  #resume: number | null = null;
  /** The highest committed checkpoint so far: memory may lack event intents at or below it. */
  #eventFloor: number | null = null;
  /** The checkpoint or a slot moved since the last sweep: held entries may go now. */
  #moved = false;

  constructor(mem: JournalMemory, slots: JournalSlots) {
    this.#mem = mem;
    this.#slots = slots;
  }

  /** The checkpoint as committed (at open, then with each commit that wrote it). */
  set committedResume(resume: number | null) {
    if (resume !== this.#resume) this.#moved = true;
    this.#resume = resume;
    // A reset may move the checkpoint back; what memory dropped below the old one stays dropped.
    if (resume !== null && (this.#eventFloor === null || resume > this.#eventFloor)) {
      this.#eventFloor = resume;
    }
  }

  /** A commit wrote slot records: a completed slot may free its intents. */
  slotsCommitted(): void {
    this.#moved = true;
  }

  get committedResume(): number | null {
    return this.#resume;
  }

  /**
   * Whether the journal may hold this intent while memory does not: an event intent at or below
   * the highest checkpoint committed since open (not loaded, or dropped), a slot intent of a slot
   * at or before its rule's last completed one. Above those, memory holds every intent recorded.
   */
  mayLack(intent: Pick<NewIntent, 'ruleId' | 'trigger' | 'offset'>): boolean {
    if (intent.trigger.kind === 'slot') {
      const last = this.#slots.get(intent.ruleId)?.lastCompletedSlot;
      return last !== undefined && intent.trigger.slot <= last;
    }
    return this.#eventFloor !== null && intent.offset <= this.#eventFloor;
  }

  /** A commit is in: what it made final may leave memory (`sweep`: not after close). */
  commitIn(
    sent: readonly JournalEntry[],
    resume: number | null | undefined,
    slots: boolean,
    sweep: boolean,
  ): void {
    if (resume !== undefined) this.committedResume = resume;
    if (slots) this.slotsCommitted();
    for (const e of sent) this.committed(e);
    if (sweep) this.sweep();
  }

  /** `entry` is committed as it is: dropped if finished and passed, else held if finished. */
  committed(entry: JournalEntry): void {
    if (!entry.deleted && !isTerminal(entry.row.state)) return;
    const id = entry.row.command_id;
    if (this.#mem.get(id) !== entry) return;
    if (this.#droppable(entry)) this.#mem.forget(id);
    else this.#held.set(id, entry);
  }

  /**
   * Drops the held entries that may go now and forgets those that changed again since. Only
   * after the checkpoint or a slot moved: while an old open intent holds the checkpoint, the
   * held entries pile up and a pass over them at every commit would cost their number each time.
   */
  sweep(): void {
    if (!this.#moved) return;
    this.#moved = false;
    for (const [id, e] of this.#held) {
      if (this.#mem.get(id) !== e) this.#held.delete(id);
      else if (this.#droppable(e)) {
        this.#mem.forget(id);
        this.#held.delete(id);
      }
    }
  }

  #droppable(e: JournalEntry): boolean {
    if (e.deleted) return true;
    if (isOpenEntry(e) || e.row.state === 'dead-lettered') return false;
    if (e.row.trigger_kind === 'event') {
      return this.#resume !== null && e.row.justifying_offset <= this.#resume;
    }
    const slot = this.#slots.get(e.row.rule_id);
    const own = e.row.trigger_slot ?? 0;
    return (
      slot?.lastCompletedSlot !== undefined &&
      slot.lastCompletedSlot >= own &&
      slot.inProgressSlot !== own
    );
  }
}
