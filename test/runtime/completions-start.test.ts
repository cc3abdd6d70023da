import { describe, expect, it } from 'vitest';
import { completionsStart } from '../../src/runtime/completions-start.js';

describe('completionsStart', () => {
  it('begins at the ledger end for the acting parties when nothing is open', () => {
    expect(completionsStart(40, [], ['payer'])).toEqual({ begin: 40, parties: ['payer'] });
  });

  it("begins no later than the oldest open intent's offset, and follows its parties too", () => {
    const open = [
      { offset: 30, actAs: ['payer'] },
      { offset: 12, actAs: ['issuer'] },
      { offset: 55, actAs: ['auditor'] },
    ];
    const start = completionsStart(40, open, ['payer']);
    expect(start.begin).toBe(12);
    expect([...new Set(start.parties)].sort()).toEqual(['auditor', 'issuer', 'payer']);
  });
});
