import { describe, expect, it } from 'vitest';
import { LedgerTransportError } from '../../src/ledger/ledger-transport-error.js';
import { attemptErrorStep } from '../../src/runtime/attempt-error-step.js';
import { errorRecord } from '../../src/runtime/error-record.js';
import type { TrackedIntent } from '../../src/runtime/tracked-intent.js';
import { intentRecord, ledgerError } from './tracker-samples.js';

const DEDUP = { mode: 'offset', fallbackMs: 60_000 } as const;

type Intent = Parameters<typeof attemptErrorStep>[0];

function intent(err: unknown, overrides: Partial<TrackedIntent> = {}): Intent {
  return {
    dedup: { kind: 'offset', offset: 10 },
    record: intentRecord({ attempts: 1 }),
    internalErrors: 0,
    lastError: errorRecord(err),
    ...overrides,
  };
}

function step(err: unknown, overrides: Partial<TrackedIntent> = {}, completionOffset?: number) {
  return attemptErrorStep(intent(err, overrides), err, completionOffset, false, DEDUP);
}

describe('attemptErrorStep', () => {
  it('follows the classification', () => {
    const lost = new LedgerTransportError('reset', 'POST /v2/commands/async/submit', 'hang up');
    expect(step(lost)).toEqual({ kind: 'retry' });
    expect(step(ledgerError('SUBMISSION_ALREADY_IN_FLIGHT', 2))).toEqual({
      kind: 'await-in-flight',
    });
    expect(step(ledgerError('CONTRACT_NOT_FOUND', 11))).toEqual({ kind: 'recheck' });
    expect(step(ledgerError('DAML_AUTHORIZATION_ERROR', 8))).toEqual({
      kind: 'dead-letter',
      reason: 'final',
    });
  });

  it('retries a rejected token instead of dead-lettering it', () => {
    expect(step(ledgerError('UNAUTHENTICATED', 6, { status: 401 }))).toEqual({ kind: 'retry' });
  });

  it("settles a duplicate at the earlier completion's offset, else at this completion's", () => {
    const named = ledgerError('DUPLICATE_COMMAND', 10, { context: { completion_offset: '77' } });
    expect(step(named, {}, 90)).toEqual({ kind: 'duplicate', completionOffset: 77 });
    expect(step(ledgerError('DUPLICATE_COMMAND', 10), {}, 90)).toEqual({
      kind: 'duplicate',
      completionOffset: 90,
    });
    expect(step(ledgerError('DUPLICATE_COMMAND', 10))).toEqual({
      kind: 'duplicate',
      completionOffset: undefined,
    });
  });

  it('changes the dedup period before anything else when the participant refuses it', () => {
    const refused = ledgerError('PARTICIPANT_PRUNED_DATA_ACCESSED', 9);
    expect(step(refused)).toEqual({ kind: 'fall-back-dedup', ms: 60_000 });
    const duration = { dedup: { kind: 'duration', ms: 60_000 } } as const;
    expect(step(refused, duration)).toEqual({ kind: 'anchor-at-pruning' });
    // In doubt with a duration already: the refusal is final.
    const inDoubt = { ...duration, record: intentRecord({ attempts: 2, inDoubt: true }) };
    expect(step(refused, inDoubt)).toEqual({ kind: 'dead-letter', reason: 'final' });
  });

  it('gives up an internal error as unreadable values at the bound, and retries it before', () => {
    const err = ledgerError('LEDGER_API_INTERNAL_ERROR', 4, {
      status: 500,
      context: { definite_answer: 'false' },
    });
    expect(
      attemptErrorStep(intent(err, { internalErrors: 2 }), err, undefined, true, DEDUP),
    ).toEqual({
      kind: 'retry',
    });
    const third = attemptErrorStep(intent(err, { internalErrors: 3 }), err, undefined, true, DEDUP);
    expect(third).toMatchObject({ kind: 'dead-letter', reason: 'unreadable-values' });
    expect(third.kind === 'dead-letter' && third.lastError?.code).toBe('LEDGER_API_INTERNAL_ERROR');
    // The last attempt allowed ends the same way, whatever the count.
    const last = intent(err, { internalErrors: 1, record: intentRecord({ attempts: 5 }) });
    expect(attemptErrorStep(last, err, undefined, true, DEDUP)).toMatchObject({
      reason: 'unreadable-values',
    });
    // Not internal (e.g. from a completion): classified as usual.
    expect(attemptErrorStep(intent(err, { internalErrors: 3 }), err, 5, false, DEDUP)).toEqual({
      kind: 'retry',
    });
  });
});
