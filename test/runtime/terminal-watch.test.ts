import { describe, expect, it } from 'vitest';
import { AbortError } from '../../src/core/abort-error.js';
import { FakeClock } from '../../src/core/fake-clock.js';
import { TerminalWatch } from '../../src/runtime/terminal-watch.js';

/** Whether `p` has settled, after the promise callbacks due now ran. */
async function settledYet(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void p.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return settled;
}

describe('TerminalWatch', () => {
  it('resolves true once every intent it waits on is terminal, not before', async () => {
    const clock = new FakeClock();
    const watch = new TerminalWatch();
    const waiting = watch.until(['a', 'b'], { clock, timeoutMs: 1_000 });
    watch.note({ commandId: 'a', to: 'submitted' });
    watch.note({ commandId: 'a', to: 'succeeded' });
    watch.note({ commandId: 'c', to: 'rejected' });
    expect(await settledYet(waiting)).toBe(false);
    watch.note({ commandId: 'b', to: 'dead-lettered' });
    await expect(waiting).resolves.toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it('resolves false after the timeout, and at once with nothing to wait on', async () => {
    const clock = new FakeClock();
    const watch = new TerminalWatch();
    const waiting = watch.until(['a'], { clock, timeoutMs: 1_000 });
    await clock.advance(999);
    expect(await settledYet(waiting)).toBe(false);
    await clock.advance(1);
    await expect(waiting).resolves.toBe(false);
    await expect(watch.until([], { clock, timeoutMs: 1_000 })).resolves.toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it('rejects with the failure it is told of, or AbortError when aborted', async () => {
    const clock = new FakeClock();
    const failed = new TerminalWatch();
    const waiting = failed.until(['a'], { clock, timeoutMs: 1_000 });
    const boom = new Error('stream failed');
    failed.fail(boom);
    await expect(waiting).rejects.toBe(boom);
    const aborts = new AbortController();
    const aborted = new TerminalWatch().until(['a'], {
      clock,
      timeoutMs: 1_000,
      signal: aborts.signal,
    });
    aborts.abort();
    await expect(aborted).rejects.toBeInstanceOf(AbortError);
    expect(clock.pendingTimers).toBe(0);
  });
});
