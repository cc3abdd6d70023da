import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../src/core/deep-freeze.js';

describe('deepFreeze', () => {
  it('freezes everything reachable, arrays included, and returns the value', () => {
    const value = { a: { b: [1, { c: 'x' }] }, d: null };
    expect(deepFreeze(value)).toBe(value);
    expect(Object.isFrozen(value)).toBe(true);
    expect(Object.isFrozen(value.a)).toBe(true);
    expect(Object.isFrozen(value.a.b)).toBe(true);
    expect(Object.isFrozen(value.a.b[1])).toBe(true);
    expect(deepFreeze('text')).toBe('text');
  });

  it('walks a value nested 100,000 deep without overflowing the stack', () => {
    let deep: { next?: unknown } = {};
    const root = deep;
    for (let i = 0; i < 100_000; i++) {
      const next = {};
      deep.next = next;
      deep = next;
    }
    deepFreeze(root);
    expect(Object.isFrozen(deep)).toBe(true);
  });

  it('leaves what skip accepts writable, with what it holds; does not walk into frozen objects', () => {
    const library = { evaluate: () => 1, state: { n: 0 } };
    const shared = Object.freeze({ inner: { n: 0 } });
    const value = deepFreeze({ library, shared }, (x) => 'evaluate' in x);
    expect(Object.isFrozen(value)).toBe(true);
    expect(Object.isFrozen(library)).toBe(false);
    expect(Object.isFrozen(library.state)).toBe(false);
    // Frozen at the top only: taken as frozen through, as the callers freeze their parts whole.
    expect(Object.isFrozen(shared.inner)).toBe(false);
  });
});
