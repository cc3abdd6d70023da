import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { SeededRandom } from '../../src/core/seeded-random.js';
import { LedgerTransportError } from '../../src/ledger/ledger-transport-error.js';
import {
  isTransientPackagesFailure,
  retryPackagesRead,
} from '../../src/runtime/retry-packages-read.js';
import { RuntimeError } from '../../src/runtime/runtime-error.js';

// `run` reads the participant's packages once the participant answered; a failure that a retry
// may fix (the participant restarting, a proxy's 503) is waited out, a final one is not.

const unreadable = (cause: unknown): RuntimeError =>
  new RuntimeError('PACKAGES_UNREADABLE', "cannot read the participant's packages: …", { cause });
const refused = (): LedgerTransportError =>
  new LedgerTransportError('connect', 'GET /v2/packages', 'connection refused');
const proxyPage = (status: number): LedgerTransportError =>
  new LedgerTransportError('bad-response', 'GET /v2/packages', 'not JSON', { status });

describe('isTransientPackagesFailure', () => {
  it('is true for an unreachable participant and a 503, false for a final answer', () => {
    expect(isTransientPackagesFailure(unreadable(refused()))).toBe(true);
    expect(isTransientPackagesFailure(unreadable(proxyPage(503)))).toBe(true);
    expect(isTransientPackagesFailure(unreadable(proxyPage(400)))).toBe(false);
    expect(isTransientPackagesFailure(refused())).toBe(false); // not a packages failure
  });
});

describe('retryPackagesRead', () => {
  it('retries transient failures with backoff until the read succeeds, saying why it waits', async () => {
    const clock = new FakeClock();
    const waiting: (string | undefined)[] = [];
    let calls = 0;
    const done = retryPackagesRead(
      () => {
        calls++;
        return calls < 3 ? Promise.reject(unreadable(refused())) : Promise.resolve('catalogue');
      },
      { clock, random: new SeededRandom(1), onWaiting: (r) => waiting.push(r) },
    );
    await clock.advance(60_000);
    await expect(done).resolves.toBe('catalogue');
    expect(calls).toBe(3);
    expect(waiting).toHaveLength(3);
    expect(waiting[0]).toMatch(/cannot read the participant's packages.*trying again in/);
    expect(waiting.at(-1)).toBeUndefined();
  });

  it('fails at once on a final failure', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const final = unreadable(proxyPage(400));
    await expect(
      retryPackagesRead(
        () => {
          calls++;
          return Promise.reject(final);
        },
        { clock, random: new SeededRandom(1) },
      ),
    ).rejects.toBe(final);
    expect(calls).toBe(1);
  });

  it('gives up with the last failure once timeoutMs has passed', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const done = retryPackagesRead(
      () => {
        calls++;
        return Promise.reject(unreadable(refused()));
      },
      { clock, random: new SeededRandom(1), timeoutMs: 5_000 },
    );
    const outcome = expect(done).rejects.toMatchObject({ code: 'PACKAGES_UNREADABLE' });
    await clock.advance(60_000);
    await outcome;
    expect(calls).toBeGreaterThan(1);
    // No try is started after the deadline: the backoff is at most 30 s, so few tries fit.
    expect(calls).toBeLessThan(8);
  });
});
