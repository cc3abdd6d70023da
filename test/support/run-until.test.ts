import { describe, expect, it } from 'vitest';
import { runUntil } from './run-until.js';
import { TestScope, withScope } from './test-scope.js';

describe('runUntil', () => {
  it('waits for the condition, runs then, and stops what start registered, last first', async () => {
    const log: string[] = [];
    let n = 0;
    const result = await runUntil({
      start: async (scope) => {
        scope.defer(null, () => log.push('stop ledger'));
        scope.own({ stop: () => log.push('stop bot') });
        return Promise.resolve({ count: () => ++n });
      },
      probe: (r) => r.count(),
      until: (v) => v >= 3,
      what: 'three polls',
      timeoutMs: 5_000,
      then: (_r, value) => {
        log.push(`then ${value}`);
        return 'done';
      },
    });
    expect(result).toBe('done');
    expect(log).toEqual(['then 3', 'stop bot', 'stop ledger']);
  });

  it('times out naming what it waited for and the last value, and still cleans up', async () => {
    const log: string[] = [];
    const run = runUntil({
      start: (scope) => Promise.resolve(scope.defer('x', () => log.push('cleaned'))),
      probe: () => 41,
      until: (v) => v === 42,
      what: 'the answer',
      timeoutMs: 50,
    });
    await expect(run).rejects.toThrow(/timed out after 50 ms waiting for the answer; last: 41/);
    expect(log).toEqual(['cleaned']);
  });

  it('cleans up when start fails half-way, and the start error is the one thrown', async () => {
    const log: string[] = [];
    const run = runUntil({
      start: (scope) => {
        scope.defer(null, () => {
          log.push('cleaned');
          throw new Error('cleanup failed too');
        });
        return Promise.reject(new Error('start failed'));
      },
      probe: () => 0,
      until: () => true,
      what: 'nothing',
      timeoutMs: 50,
    });
    await expect(run).rejects.toThrow('start failed');
    expect(log).toEqual(['cleaned']);
  });
});

describe('TestScope', () => {
  it('runs every cleanup even when one throws, then rethrows the failures', async () => {
    const log: string[] = [];
    const scope = new TestScope();
    scope.defer(null, () => log.push('a'));
    scope.defer(null, () => {
      throw new Error('b failed');
    });
    scope.defer(null, () => log.push('c'));
    await expect(scope.close()).rejects.toThrow('b failed');
    expect(log).toEqual(['c', 'a']);
    expect(() => scope.defer(null, () => undefined)).toThrow(/closed/);
  });

  it('gathers several cleanup failures into one AggregateError', async () => {
    const run = withScope((scope) => {
      scope.defer(null, () => Promise.reject(new Error('one')));
      scope.defer(null, () => Promise.reject(new Error('two')));
      return Promise.resolve();
    });
    await expect(run).rejects.toBeInstanceOf(AggregateError);
  });
});
