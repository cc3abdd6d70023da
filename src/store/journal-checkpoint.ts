import type { JournalMemory } from './journal-memory.js';

/**
 * The checkpoint as the SQLite store keeps it: the resume and processed offsets in memory,
 * changed in batches with an undo each, and the pair the file has, so a commit writes it only
 * when it changed. The resume offset is a low-watermark: `settle` moves it up towards the
 * processed offset, but never past an open intent that holds it.
 */
export class JournalCheckpoint {
  readonly #mem: JournalMemory;
  readonly #onUndo: (undo: () => void) => void;
  #resume: number | null = null;
  #processed: number | null = null;
  #writtenResume: number | null = null;
  #writtenProcessed: number | null = null;

  constructor(mem: JournalMemory, onUndo: (undo: () => void) => void) {
    this.#mem = mem;
    this.#onUndo = onUndo;
  }

  get resume(): number | null {
    return this.#resume;
  }

  get processed(): number | null {
    return this.#processed;
  }

  /** The resume offset as committed: compaction must keep what a replay from it needs. */
  get writtenResume(): number | null {
    return this.#writtenResume;
  }

  /** Changed since the last write. */
  get changed(): boolean {
    return this.#resume !== this.#writtenResume || this.#processed !== this.#writtenProcessed;
  }

  /** The processed offset never goes back; the resume offset follows at `settle`. */
  advance(processedOffset: number): void {
    this.#set(this.#resume, Math.max(this.#processed ?? processedOffset, processedOffset));
  }

  reset(offset: number): void {
    this.#set(offset, offset);
  }

  settle(): void {
    if (this.#processed === null) return;
    // Open intents at or below the checkpoint (requeued, or jumped over by a reset) are resumed
    // from the journal, not by a replay, so they do not hold the checkpoint.
    const resume = this.#resume;
    const lowestOpen = this.#mem.lowestOpenAbove(resume ?? -1);
    let candidate = this.#processed;
    if (lowestOpen !== undefined) candidate = Math.min(candidate, lowestOpen - 1);
    const next = resume === null ? candidate : Math.max(resume, candidate);
    if (next !== resume && next >= 0) this.#set(next, this.#processed);
  }

  /** The checkpoint is committed. */
  written(): void {
    this.#writtenResume = this.#resume;
    this.#writtenProcessed = this.#processed;
  }

  /** Starts over from the file's checkpoint. */
  load(resume: number | null, processed: number | null): void {
    this.#resume = this.#writtenResume = resume;
    this.#processed = this.#writtenProcessed = processed;
  }

  #set(resume: number | null, processed: number | null): void {
    const before = { resume: this.#resume, processed: this.#processed };
    this.#resume = resume;
    this.#processed = processed;
    // The offsets below the old checkpoint were dropped: a lower one needs them back.
    if (before.resume !== null && (resume === null || resume < before.resume)) {
      this.#mem.rebuildOffsets();
    }
    this.#onUndo(() => {
      this.#resume = before.resume;
      this.#processed = before.processed;
      if (resume !== null && (before.resume === null || before.resume < resume)) {
        this.#mem.rebuildOffsets();
      }
    });
  }
}
