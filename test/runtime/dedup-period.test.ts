import { describe, expect, it } from 'vitest';
import {
  anchorAfterPruning,
  dedupStep,
  fallbackDurationMs,
  initialDedup,
  pruningAnchor,
} from '../../src/runtime/dedup-period.js';
import { LedgerTransportError } from '../../src/ledger/ledger-transport-error.js';
import { intentRecord, ledgerError } from './tracker-samples.js';

const OFFSET = { mode: 'offset', fallbackMs: 60_000 } as const;
const DURATION = { mode: 'duration', valueMs: 90_000 } as const;
const refusedPeriod = ledgerError('INVALID_DEDUPLICATION_PERIOD', 9, { status: 400 });
const prunedAnchor = ledgerError('PARTICIPANT_PRUNED_DATA_ACCESSED', 9, { status: 400 });

describe('initialDedup', () => {
  it('anchors an event intent at its offset, or uses the configured duration', () => {
    const record = intentRecord({ offset: 42 });
    expect(initialDedup(record, OFFSET)).toEqual({ kind: 'offset', offset: 42 });
    expect(initialDedup(record, DURATION)).toEqual({ kind: 'duration', ms: 90_000 });
  });

  it('reaches a slot back to the slot time in either mode', () => {
    const record = intentRecord({ trigger: { kind: 'slot', slot: 1_700_000, contractId: 'c' } });
    expect(initialDedup(record, OFFSET)).toEqual({ kind: 'since', fromMs: 1_700_000 });
    expect(initialDedup(record, DURATION)).toEqual({ kind: 'since', fromMs: 1_700_000 });
  });
});

describe('dedupStep', () => {
  it('falls back to the configured duration when an offset or slot anchor is refused', () => {
    for (const err of [refusedPeriod, prunedAnchor]) {
      expect(dedupStep(err, { kind: 'offset', offset: 3 }, false, OFFSET)).toEqual({
        kind: 'fall-back',
        ms: 60_000,
      });
      expect(dedupStep(err, { kind: 'since', fromMs: 0 }, true, DURATION)).toEqual({
        kind: 'fall-back',
        ms: 90_000,
      });
    }
  });

  it('anchors at the pruning offset once a duration is refused too, unless an attempt is in doubt', () => {
    const duration = { kind: 'duration', ms: 60_000 } as const;
    expect(dedupStep(prunedAnchor, duration, false, OFFSET)).toEqual({ kind: 'anchor-at-pruning' });
    expect(dedupStep(prunedAnchor, duration, true, OFFSET)).toEqual({ kind: 'none' });
  });

  it('leaves every other error to its classification', () => {
    const offset = { kind: 'offset', offset: 3 } as const;
    expect(dedupStep(ledgerError('DUPLICATE_COMMAND', 10), offset, false, OFFSET)).toEqual({
      kind: 'none',
    });
    const lost = new LedgerTransportError('reset', 'POST /v2/commands/async/submit', 'hang up');
    expect(dedupStep(lost, offset, false, OFFSET)).toEqual({ kind: 'none' });
  });

  it('reads the fallback from either mode', () => {
    expect(fallbackDurationMs(OFFSET)).toBe(60_000);
    expect(fallbackDurationMs(DURATION)).toBe(90_000);
  });
});

describe('anchorAfterPruning and pruningAnchor', () => {
  it('moves the anchor only forward, and never to an unknown pruning offset', () => {
    expect(anchorAfterPruning(0, undefined)).toBeUndefined();
    expect(anchorAfterPruning(50, undefined)).toBe(50);
    expect(anchorAfterPruning(50, 50)).toBeUndefined();
    expect(anchorAfterPruning(40, 50)).toBeUndefined();
    expect(anchorAfterPruning(60, 50)).toBe(60);
  });

  it('reads the pruning offset; a failed read gives up', async () => {
    const signal = new AbortController().signal;
    const pruned = {
      latestPrunedOffsets: () =>
        Promise.resolve({
          participantPrunedUpToInclusive: 70,
          allDivulgedContractsPrunedUpToInclusive: 70,
        }),
    };
    expect(await pruningAnchor(pruned, 50, signal)).toBe(70);
    expect(await pruningAnchor(pruned, 70, signal)).toBeUndefined();
    const failing = { latestPrunedOffsets: () => Promise.reject(new Error('down')) };
    expect(await pruningAnchor(failing, undefined, signal)).toBeUndefined();
  });
});
