import { describe, expect, it } from 'vitest';
import { SandboxConfigError } from '../../../src/sandbox/start-sandbox.js';
import { call, startTestSandbox, wildcard, wsCollect } from './sandbox-fixture.js';

describe('startSandbox / stop', () => {
  it('stop() closes open streams and the listener, and is idempotent', async () => {
    const sb = await startTestSandbox();
    const tail = wsCollect(sb, '/v2/updates', {
      beginExclusive: 0,
      updateFormat: {
        includeTransactions: {
          eventFormat: wildcard(sb.parties.Alice!),
          transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA',
        },
      },
    });
    await new Promise((r) => setTimeout(r, 50));
    await Promise.all([sb.stop(), sb.stop()]);
    await sb.stop();
    expect((await tail).closeCode).toBe(1006);
    await expect(call(sb, 'GET', '/livez')).rejects.toThrow();
  });

  it('is reproducible for a seed and rejects bad users', async () => {
    const a = await startTestSandbox({ seed: 5 });
    const b = await startTestSandbox({ seed: 5 });
    try {
      expect(a.participantId).toBe(b.participantId);
      expect(a.parties).toEqual(b.parties);
    } finally {
      await a.stop();
      await b.stop();
    }
    await expect(startTestSandbox({ users: ['no-colon'] })).rejects.toBeInstanceOf(
      SandboxConfigError,
    );
  });
});
