import { describe, expect, it } from 'vitest';
import {
  notNeededError,
  recheckVerdict,
  type RecheckFindings,
} from '../../src/runtime/contention-recheck.js';
import { intentRecord } from './tracker-samples.js';

const lastError = { code: 'CONTRACT_NOT_FOUND', message: 'gone' };
const sure = { record: intentRecord({ offset: 10 }), lastError };
const inDoubt = { record: intentRecord({ offset: 10, inDoubt: true }), lastError };

function findings(overrides: Partial<RecheckFindings>): RecheckFindings {
  return { found: { kind: 'active' }, pruned: false, completed: undefined, ...overrides };
}

describe('recheckVerdict', () => {
  it('settles succeeded when our own transaction archived the input', () => {
    const ours = { kind: 'ours', contractId: 'c1', updateId: 'tx-5', offset: 15 } as const;
    expect(recheckVerdict(findings({ found: ours }), sure)).toEqual({
      kind: 'succeeded',
      via: 'archive',
      updateId: 'tx-5',
      offset: 15,
      contractId: 'c1',
    });
  });

  it('settles succeeded when a success completion of ours was found', () => {
    const completed = { kind: 'ours', updateId: 'tx-6', offset: 16 } as const;
    expect(recheckVerdict(findings({ completed }), sure)).toEqual({
      kind: 'succeeded',
      via: 'completion',
      updateId: 'tx-6',
      offset: 16,
    });
  });

  it('rejects when another command archived the input', () => {
    const archivedBy = { updateId: 'tx-9', offset: 19 };
    const verdict = recheckVerdict(
      findings({ found: { kind: 'gone', contractId: 'c1', archivedBy } }),
      sure,
    );
    expect(verdict).toEqual({ kind: 'rejected', contractId: 'c1', archivedBy });
    if (verdict.kind !== 'rejected') throw new Error('unreachable');
    expect(notNeededError(verdict, lastError)).toEqual({
      ...lastError,
      reason: 'not-needed',
      contractId: 'c1',
      archivedBy,
    });
  });

  it('dead-letters an in-doubt intent when pruning hides who archived the input', () => {
    const gone = { kind: 'gone', contractId: 'c1', unseen: true } as const;
    const verdict = recheckVerdict(findings({ found: gone, pruned: true }), inDoubt);
    expect(verdict).toMatchObject({
      kind: 'dead-letter',
      lastError: { code: 'EARLIER_COMMIT_UNKNOWN' },
    });
  });

  it('dead-letters an in-doubt intent whose completions are pruned, and retries one not in doubt', () => {
    const completed = { kind: 'pruned', prunedUpTo: 30 } as const;
    expect(recheckVerdict(findings({ completed }), inDoubt)).toMatchObject({
      kind: 'dead-letter',
      lastError: { code: 'EARLIER_COMMIT_UNKNOWN' },
    });
    expect(recheckVerdict(findings({ completed }), sure)).toEqual({ kind: 'retry' });
  });

  it('retries when it cannot tell: a failed lookup, an unknown pruning offset, unread completions', () => {
    const error = new Error('down');
    expect(
      recheckVerdict(findings({ found: { kind: 'unknown', contractId: 'c1', error } }), sure),
    ).toEqual({ kind: 'retry', unknown: { lookup: 'archive', error, contractId: 'c1' } });
    const gone = { kind: 'gone', contractId: 'c1', unseen: true } as const;
    expect(recheckVerdict(findings({ found: gone, pruned: undefined }), inDoubt)).toMatchObject({
      kind: 'retry',
      unknown: { lookup: 'archive', contractId: 'c1' },
    });
    expect(recheckVerdict(findings({ completed: { kind: 'unknown', error } }), sure)).toEqual({
      kind: 'retry',
      unknown: { lookup: 'completions', error },
    });
  });

  it('retries while the inputs are still active', () => {
    expect(recheckVerdict(findings({}), sure)).toEqual({ kind: 'retry' });
    expect(recheckVerdict(findings({ completed: { kind: 'none' } }), inDoubt)).toEqual({
      kind: 'retry',
    });
  });
});
