import type { CommittedTransaction } from './committed-transaction.js';
import { engineError, type EngineError } from './engine-error.js';
import type { LogEntry, LogListener } from './engine-types.js';

/**
 * The ordered log of transactions and completions: the ledger end, the pruning offset, reads
 * by offset range or update id, and the listeners the streams hang on. See `LedgerReader`.
 */
export class LedgerLog {
  #end = 0;
  #prunedUpTo = 0;
  /** In offset order; pruning drops a prefix. */
  #entries: LogEntry[] = [];
  readonly #byOffset = new Map<number, CommittedTransaction>();
  readonly #byUpdateId = new Map<string, CommittedTransaction>();
  readonly #listeners = new Set<LogListener>();

  /** The offset of the last entry; 0 for an empty ledger. */
  get end(): number {
    return this.#end;
  }

  /** Everything at or below this offset has been pruned; 0 if never pruned. */
  get prunedUpTo(): number {
    return this.#prunedUpTo;
  }

  /** Appends an entry and tells the listeners, synchronously. */
  append(entry: LogEntry): void {
    if (entry.kind === 'transaction') {
      this.#byOffset.set(entry.offset, entry.transaction);
      this.#byUpdateId.set(entry.transaction.updateId, entry.transaction);
    }
    this.#entries.push(entry);
    if (entry.offset > this.#end) this.#end = entry.offset;
    for (const l of this.#listeners) l(entry);
  }

  subscribe(listener: LogListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Drops the entries at or below `offset` (a positive offset at most the end; the caller
   * checks). False when the log was already pruned that far.
   */
  prune(offset: number): boolean {
    if (offset <= this.#prunedUpTo) return false;
    this.#prunedUpTo = offset;
    this.#entries = this.#entries.filter((e) => e.offset > offset);
    for (const [o, tx] of this.#byOffset) {
      if (o > offset) continue;
      this.#byOffset.delete(o);
      this.#byUpdateId.delete(tx.updateId);
    }
    return true;
  }

  /**
   * Checks a read's offset: PARTICIPANT_PRUNED_DATA_ACCESSED (9) below the pruning offset,
   * OFFSET_AFTER_LEDGER_END (12) above the ledger end. Null when fine.
   */
  checkOffset(offset: number, field: string): EngineError | null {
    if (offset > this.#end) {
      return engineError(
        'OFFSET_AFTER_LEDGER_END',
        12,
        `${field} (${offset}) is after ledger end (${this.#end})`,
        { context: { offset: String(offset), ledger_end: String(this.#end) } },
      );
    }
    if (offset < this.#prunedUpTo) {
      return engineError(
        'PARTICIPANT_PRUNED_DATA_ACCESSED',
        9,
        `${field} (${offset}) is before the pruning offset (${this.#prunedUpTo})`,
        { context: { earliest_offset: String(this.#prunedUpTo) } },
      );
    }
    return null;
  }

  entriesBetween(
    beginExclusive: number,
    endInclusive: number,
    limit = Number.POSITIVE_INFINITY,
  ): readonly LogEntry[] {
    const out: LogEntry[] = [];
    for (let i = this.#lowerBound(beginExclusive); i < this.#entries.length; i++) {
      const e = this.#entries[i]!;
      if (e.offset > endInclusive || out.length >= limit) break;
      out.push(e);
    }
    return out;
  }

  /**
   * The committed transactions with beginExclusive < offset <= endInclusive: at most `limit` of
   * them, the first ones ascending, or with `descending` the last ones, latest first.
   */
  transactionsBetween(
    beginExclusive: number,
    endInclusive: number,
    limit = Number.POSITIVE_INFINITY,
    descending = false,
  ): readonly CommittedTransaction[] {
    const out: CommittedTransaction[] = [];
    // Walks the entries from one end of the range to the other.
    const step = descending ? -1 : 1;
    let i = descending ? this.#lowerBound(endInclusive) - 1 : this.#lowerBound(beginExclusive);
    for (; out.length < limit && i >= 0 && i < this.#entries.length; i += step) {
      const e = this.#entries[i]!;
      if (e.offset <= beginExclusive || e.offset > endInclusive) break;
      if (e.kind === 'transaction') out.push(e.transaction);
    }
    return out;
  }

  transactionByOffset(offset: number): CommittedTransaction | undefined {
    return this.#byOffset.get(offset);
  }

  transactionById(updateId: string): CommittedTransaction | undefined {
    return this.#byUpdateId.get(updateId);
  }

  /** The first index whose entry's offset is above `offset`. */
  #lowerBound(offset: number): number {
    let lo = 0;
    let hi = this.#entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#entries[mid]!.offset > offset) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
