import { describe, expect, it } from 'vitest';
import { once } from '../../src/core/once.js';

describe('once', () => {
  it('runs the function on the first call only', () => {
    let runs = 0;
    const release = once(() => {
      runs += 1;
    });
    release();
    release();
    release();
    expect(runs).toBe(1);
  });
});
