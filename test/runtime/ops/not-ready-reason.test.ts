import { describe, expect, it } from 'vitest';
import {
  notReadyReason,
  type LedgerEndReading,
  type ReadinessProbe,
} from '../../../src/runtime/ops/not-ready-reason.js';

/** A probe of a ready bot (connected, caught up), with what the test changes; counts end reads. */
function probe(
  over: Partial<Omit<ReadinessProbe, 'readLedgerEnd' | 'processedOffset'>> & {
    end?: LedgerEndReading;
    processed?: number | undefined;
  } = {},
): { probe: ReadinessProbe; endReads: () => number } {
  let reads = 0;
  const { end, processed, ...rest } = over;
  return {
    probe: {
      botState: 'running',
      streamExpected: true,
      updatesConnected: true,
      maxLag: 10,
      processedOffset: () => ('processed' in over ? processed : 100),
      readLedgerEnd: () => {
        reads += 1;
        return Promise.resolve(end ?? { offset: 100 });
      },
      ...rest,
    },
    endReads: () => reads,
  };
}

describe('notReadyReason', () => {
  it('is ready when running, connected and caught up', async () => {
    const p = probe();
    expect(await notReadyReason(p.probe)).toBeUndefined();
    expect(p.endReads()).toBe(1);
  });

  it('names the state of a bot that is not running, without reading the ledger end', async () => {
    for (const botState of ['created', 'starting', 'stopping', 'stopped', 'failed'] as const) {
      const p = probe({ botState });
      expect(await notReadyReason(p.probe)).toBe(`bot is ${botState}`);
      expect(p.endReads()).toBe(0);
    }
  });

  it('says why a bot that waits for the participant at start has not started', async () => {
    const waitingFor = 'waiting for the participant at http://p:1 (attempt 3 failed: refused)';
    const p = probe({ botState: 'created', waitingFor });
    expect(await notReadyReason(p.probe)).toBe(waitingFor);
    expect(p.endReads()).toBe(0);
    // Once it runs, the reason no longer applies.
    expect(await notReadyReason(probe({ waitingFor }).probe)).toBeUndefined();
  });

  it('is not ready while the updates stream is disconnected, without reading the ledger end', async () => {
    const p = probe({ updatesConnected: false });
    expect(await notReadyReason(p.probe)).toBe('updates stream disconnected');
    expect(p.endReads()).toBe(0);
  });

  it('says why the updates stream is down, when a failure said so', async () => {
    const p = probe({
      updatesConnected: false,
      updatesProblem: "the participant rejected the bot's token: check ledger.auth",
    });
    expect(await notReadyReason(p.probe)).toBe(
      "updates stream disconnected: the participant rejected the bot's token: check ledger.auth",
    );
  });

  it('needs no stream for schedule rules only', async () => {
    const p = probe({ streamExpected: false, updatesConnected: false, end: { offset: 5000 } });
    expect(await notReadyReason(p.probe)).toBeUndefined();
    expect(p.endReads()).toBe(0);
  });

  it('is not ready when the ledger end cannot be read', async () => {
    const p = probe({ end: { error: 'connect ECONNREFUSED 127.0.0.1:7575' } });
    expect(await notReadyReason(p.probe)).toBe(
      'cannot read the ledger end: connect ECONNREFUSED 127.0.0.1:7575',
    );
  });

  it('is ready at a lag of exactly the bound, and not ready one offset above it', async () => {
    expect(await notReadyReason(probe({ end: { offset: 110 } }).probe)).toBeUndefined();
    expect(await notReadyReason(probe({ end: { offset: 111 } }).probe)).toBe('lag 11 > 10');
    expect(await notReadyReason(probe({ end: { offset: 111 }, maxLag: 0 }).probe)).toBe(
      'lag 11 > 0',
    );
  });

  it('counts a processed offset past a stale ledger end as no lag, and is ready before any offset', async () => {
    expect(await notReadyReason(probe({ end: { offset: 90 }, maxLag: 0 }).probe)).toBeUndefined();
    expect(
      await notReadyReason(probe({ processed: undefined, end: { offset: 5000 } }).probe),
    ).toBeUndefined();
  });
});
