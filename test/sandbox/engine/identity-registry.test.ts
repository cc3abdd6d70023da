import { describe, expect, it } from 'vitest';
import type { Right } from '../../../src/ledger/wire/wire-types.js';
import { IdentityRegistry } from '../../../src/sandbox/engine/identity-registry.js';

const actAs = (party: string): Right => ({ kind: { CanActAs: { value: { party } } } });

describe('IdentityRegistry', () => {
  it('allocates parties in its namespace, once each, and can grant a user act-as on them', () => {
    const r = new IdentityRegistry('1220ab');
    expect(r.createUser({ id: 'bot' }, []).ok).toBe(true);
    const alice = r.allocateParty('Alice', { userId: 'bot' });
    expect(alice.ok && alice.value.party).toBe('Alice::1220ab');
    expect(r.isKnownParty('Alice::1220ab')).toBe(true);
    expect(r.allocateParty('Alice').ok).toBe(false);
    expect(r.allocateParty('a::b').ok).toBe(false);
    const rights = r.userRights('bot');
    expect(rights.ok && rights.value).toEqual([actAs('Alice::1220ab')]);
    const unknownUser = r.allocateParty('Bob', { userId: 'nobody' });
    expect(!unknownUser.ok && unknownUser.error.code).toBe('USER_NOT_FOUND');
    expect(r.party('Bob::1220ab')).toBeUndefined();
  });

  it('grants and revokes only what changes, and answers USER_NOT_FOUND for unknown users', () => {
    const r = new IdentityRegistry('1220ab');
    r.createUser({ id: 'bot' }, [actAs('A'), actAs('A')]);
    const granted = r.grantUserRights('bot', [actAs('A'), actAs('B')]);
    expect(granted.ok && granted.value).toEqual([actAs('B')]);
    const revoked = r.revokeUserRights('bot', [actAs('A'), actAs('C')]);
    expect(revoked.ok && revoked.value).toEqual([actAs('A')]);
    const rights = r.userRights('bot');
    expect(rights.ok && rights.value).toEqual([actAs('B')]);
    expect(r.createUser({ id: 'bot' }, []).ok).toBe(false);
    expect(r.deleteUser('bot').ok).toBe(true);
    const gone = r.userRights('bot');
    expect(!gone.ok && gone.error.code).toBe('USER_NOT_FOUND');
  });
});
