import { describe, expect, it } from 'vitest';
import {
  heapGrowthChosen,
  limitHeapGrowth,
  RUN_HEAP_GROWING_PERCENT,
} from '../../src/cli/compose/heap-growth.js';

describe('limitHeapGrowth', () => {
  it('sets the heap growing factor of the run daemon', () => {
    const set: string[] = [];
    expect(limitHeapGrowth(['--enable-source-maps'], (f) => set.push(f))).toBe(
      `--heap-growing-percent=${RUN_HEAP_GROWING_PERCENT}`,
    );
    expect(set).toEqual(['--heap-growing-percent=50']);
  });

  it('leaves it to node when its arguments choose one, in either spelling', () => {
    for (const arg of ['--heap-growing-percent=200', '--heap_growing_percent=10']) {
      const set: string[] = [];
      expect(heapGrowthChosen([arg])).toBe(true);
      expect(limitHeapGrowth([arg], (f) => set.push(f))).toBeUndefined();
      expect(set).toEqual([]);
    }
    expect(heapGrowthChosen(['--heap-growing-percentage=1', '--max-old-space-size=100'])).toBe(
      false,
    );
  });
});
