import { describe, expect, it } from 'vitest';
import type { Completion } from '../../src/ledger/wire/wire-types.js';
import { matchCompletion } from '../../src/runtime/match-completion.js';

function completion(submissionId: string | undefined, failed: boolean): Completion {
  return {
    commandId: 'lb-accept-10',
    userId: 'ledgerbot',
    actAs: ['payer::1220abcd'],
    ...(submissionId === undefined ? {} : { submissionId }),
    offset: 20,
    ...(failed
      ? { status: { code: 6, message: 'DUPLICATE_CONTRACT_KEY(10,abc): key taken', details: [] } }
      : { updateId: 'tx-20', status: { code: 0, message: '', details: [] } }),
  } as unknown as Completion;
}

describe('matchCompletion', () => {
  const current = { acceptAny: false, submissionId: 's2' };

  it("settles on a success of any attempt, with the completion's offset and update", () => {
    for (const id of ['s1', 's2', undefined]) {
      expect(matchCompletion(current, completion(id, false), 20)).toEqual({
        kind: 'succeeded',
        change: { to: 'succeeded', completionOffset: 20, updateId: 'tx-20' },
      });
    }
  });

  it('lets only the current attempt (or any, after in-flight) fail the intent', () => {
    expect(matchCompletion(current, completion('s2', true), 20).kind).toBe('failed');
    expect(matchCompletion(current, completion(undefined, true), 20).kind).toBe('failed');
    expect(matchCompletion(current, completion('s1', true), 20).kind).toBe('superseded');
    expect(matchCompletion({ ...current, acceptAny: true }, completion('s1', true), 20).kind).toBe(
      'failed',
    );
  });
});
