/**
 * The offsets of the open intents that hold the checkpoint, with the lowest above a bound in
 * amortised O(log n): a count per offset and a min-heap of offsets, cleaned lazily. An offset is
 * pushed when its count goes from 0 to 1; entries whose count fell back to 0, or that are at or
 * below the bound asked for, are dropped when they reach the top. Dropping those below the bound
 * is only right while the bound does not go down: the store calls `rebuild` when it does.
 */
export class OpenEventOffsets {
  readonly #counts = new Map<number, number>();
  #heap: number[] = [];

  add(offset: number): void {
    const n = this.#counts.get(offset) ?? 0;
    this.#counts.set(offset, n + 1);
    if (n === 0) this.#push(offset);
  }

  remove(offset: number): void {
    const n = this.#counts.get(offset) ?? 0;
    if (n <= 1) this.#counts.delete(offset);
    else this.#counts.set(offset, n - 1);
  }

  /** The lowest offset above `bound` with an open intent, or undefined. */
  lowestAbove(bound: number): number | undefined {
    const heap = this.#heap;
    while (heap.length > 0) {
      const top = heap[0]!;
      if (top > bound && this.#counts.has(top)) return top;
      this.#pop();
    }
    return undefined;
  }

  /** Starts over from the counts (after the bound went down). */
  rebuild(): void {
    this.#heap = [...this.#counts.keys()].sort((a, b) => a - b);
  }

  clear(): void {
    this.#counts.clear();
    this.#heap = [];
  }

  #push(offset: number): void {
    const heap = this.#heap;
    let i = heap.length;
    heap.push(offset);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]! <= offset) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = offset;
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right]! < heap[left]! ? right : left;
      if (heap[child]! >= last) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
  }
}
