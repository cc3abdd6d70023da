import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../src/core/seeded-random.js';
import {
  FaultInjector,
  parseFaults,
  type Faults,
  type FaultStats,
} from '../../../src/sandbox/server/fault-injector.js';

/**
 * Which `GET /sandbox/fault-stats` keys each fault counts in. A `Record` over `keyof Faults`:
 * the type check fails when a fault is added without an entry here, or names a key that
 * FaultStats does not have.
 */
const COUNTED_IN: Record<keyof Faults, readonly (keyof FaultStats)[]> = {
  closeStreamsAfterMessages: ['droppedStreams'],
  closeStreamsEveryMs: ['droppedStreams'],
  refuseStreams: ['droppedStreams', 'refusedStreams'],
  submitErrors: ['submitErrors'],
  completionErrors: ['completionErrors'],
  streamErrors: ['streamErrors'],
  loseSubmitResponseRate: ['lostSubmitResponses'],
  dropCompletionRate: ['droppedCompletions'],
  completionDelayMs: ['delayedSubmissions'],
  httpLatencyMs: ['delayedRequests'],
};

/** One valid value of each fault, at rate 1 where it has a rate. */
const ALWAYS: Required<Faults> = {
  closeStreamsAfterMessages: 1,
  closeStreamsEveryMs: 100,
  refuseStreams: true,
  submitErrors: [{ code: 'SEQUENCER_BACKPRESSURE', rate: 1 }],
  completionErrors: [{ code: 'LOCAL_VERDICT_LOCKED_CONTRACTS', rate: 1 }],
  streamErrors: [{ code: 'ACCESS_TOKEN_EXPIRED', rate: 1 }],
  loseSubmitResponseRate: 1,
  dropCompletionRate: 1,
  completionDelayMs: [5, 5],
  httpLatencyMs: 5,
};

const doc = readFileSync(new URL('../../../docs/sandbox.md', import.meta.url), 'utf8');

/** The rows of the markdown table whose header row starts with `| first`. */
function tableRows(first: string): string[][] {
  const lines = doc.split('\n');
  const start = lines.findIndex((l) => new RegExp(`^\\| ${first}\\s*\\|`).test(l));
  expect(start, `a table headed "${first}" in docs/sandbox.md`).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

const codes = (cell: string): string[] => [...cell.matchAll(/`([A-Za-z]+)/g)].map((m) => m[1]!);

describe('GET /sandbox/fault-stats keys', () => {
  it('every fault counts somewhere, and every counter belongs to a fault', () => {
    const stats = Object.keys(new FaultInjector(new SeededRandom(1)).stats()).sort();
    const used = new Set(Object.values(COUNTED_IN).flat());
    expect([...used].sort()).toEqual(stats);
    // Every fault named here is one POST /sandbox/faults accepts.
    expect(Object.keys(parseFaults(ALWAYS)).sort()).toEqual(Object.keys(COUNTED_IN).sort());
  });

  it('docs/sandbox.md lists every fault, and says where each is counted', () => {
    const faults = tableRows('fault').map((r) => codes(r[0]!)[0]);
    expect(faults.sort()).toEqual(Object.keys(COUNTED_IN).sort());
    const documented = new Map<string, string[]>();
    for (const row of tableRows('fault-stats key')) {
      const key = codes(row[0]!)[0]!;
      for (const fault of codes(row[2]!))
        documented.set(fault, [...(documented.get(fault) ?? []), key]);
    }
    for (const [fault, keys] of Object.entries(COUNTED_IN)) {
      expect(documented.get(fault)?.sort(), fault).toEqual([...keys].sort());
    }
    expect([...documented.keys()].sort()).toEqual(Object.keys(COUNTED_IN).sort());
  });

  it('the faults the injector decides count in their key (stream drops: faults.test.ts)', () => {
    const injector = new FaultInjector(new SeededRandom(1));
    injector.set(ALWAYS);
    injector.submitError();
    injector.completionError();
    injector.streamError(0);
    injector.loseSubmitResponse();
    injector.dropCompletion();
    injector.completionDelayMs();
    injector.httpLatencyMs();
    injector.refuseStream();
    expect(injector.stats()).toEqual({
      submitErrors: { SEQUENCER_BACKPRESSURE: 1 },
      completionErrors: { LOCAL_VERDICT_LOCKED_CONTRACTS: 1 },
      streamErrors: { ACCESS_TOKEN_EXPIRED: 1 },
      lostSubmitResponses: 1,
      droppedCompletions: 1,
      delayedSubmissions: 1,
      delayedRequests: 1,
      droppedStreams: 0,
      refusedStreams: 1,
    });
  });
});
