import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../../src/sandbox/engine/engine-types.js';
import { specValidator } from '../../support/spec-validator.js';
import { commands, createInvoice as create, invoiceArgs, invoiceLedger } from './invoice-ledger.js';

const spec = specValidator('openapi-3.5');

describe('parties and users', () => {
  it('allocates parties in the participant namespace', () => {
    const l = invoiceLedger();
    expect(l.issuer).toBe(`Issuer::1220${'ab'.repeat(32)}`);
    const again = l.engine.allocateParty('Issuer');
    expect(again.ok === false && again.error.code).toBe('INVALID_ARGUMENT');
    expect(l.engine.allocateParty('bad::hint').ok).toBe(false);
    expect(l.engine.parties().map((p) => p.party)).toEqual([l.issuer, l.other, l.payer]);
    for (const p of l.engine.parties()) spec.assert('PartyDetails', p);
  });

  it('manages users and rights', () => {
    const l = invoiceLedger();
    const canActAs = { kind: { CanActAs: { value: { party: l.payer } } } };
    const admin = { kind: { ParticipantAdmin: { value: {} } } };
    const created = l.engine.createUser({ id: 'alice-bot', primaryParty: l.payer }, [canActAs]);
    expect(created.ok).toBe(true);
    spec.assert('User', l.engine.user('alice-bot'));
    expect(l.engine.createUser({ id: 'alice-bot' }, []).ok === false).toBe(true);
    const granted = l.engine.grantUserRights('alice-bot', [canActAs, admin]);
    expect(granted.ok && granted.value).toEqual([admin]);
    const revoked = l.engine.revokeUserRights('alice-bot', [canActAs]);
    expect(revoked.ok && revoked.value).toEqual([canActAs]);
    expect(l.engine.userRights('alice-bot')).toEqual({ ok: true, value: [admin] });
    const bob = l.engine.allocateParty('Bob', { userId: 'alice-bot' });
    expect(bob.ok).toBe(true);
    const rights = l.engine.userRights('alice-bot');
    expect(rights.ok && rights.value).toHaveLength(2);
    expect(l.engine.deleteUser('alice-bot').ok).toBe(true);
    const gone = l.engine.userRights('alice-bot');
    expect(gone.ok === false && [gone.error.code, gone.error.category]).toEqual([
      'USER_NOT_FOUND',
      11,
    ]);
  });
});

describe('the log', () => {
  it('shares offsets between transactions and completions', () => {
    const l = invoiceLedger();
    const seen: LogEntry[] = [];
    const unsubscribe = l.engine.subscribe((e) => seen.push(e));
    const tx = create(l, 'A');
    const success = l.engine.recordCompletion({
      commandId: tx.commandId,
      status: { code: 0, message: '', details: [] },
      updateId: tx.updateId,
      userId: 'u',
      actAs: [l.issuer],
      submissionId: '',
      deduplicationPeriod: { Empty: {} },
      transaction: tx,
    });
    expect(success.offset).toBe(1);
    spec.assert('Completion1', success);
    const rejected = l.engine.recordCompletion({
      commandId: 'x',
      status: { code: 5, message: 'CONTRACT_NOT_FOUND(11,0): gone', details: [] },
      updateId: '',
      userId: 'u',
      actAs: [l.issuer],
    });
    expect(rejected.offset).toBe(2);
    expect(create(l, 'B').offset).toBe(3);
    expect(l.engine.ledgerEnd()).toBe(3);
    expect(seen.map((e) => `${e.kind}@${e.offset}`)).toEqual([
      'transaction@1',
      'completion@1',
      'completion@2',
      'transaction@3',
    ]);
    unsubscribe();
    create(l, 'C');
    expect(seen).toHaveLength(4);
    expect(l.engine.transactionsBetween(1, 4).map((t) => t.offset)).toEqual([3, 4]);
    expect(l.engine.entriesBetween(0, 2).map((e) => e.kind)).toEqual([
      'transaction',
      'completion',
      'completion',
    ]);
    expect(l.engine.transactionById(tx.updateId)).toBe(tx);
  });

  it('prunes and reports pruned or future offsets', () => {
    const l = invoiceLedger();
    const a = create(l, 'A');
    l.engine.submit(
      commands(
        [l.issuer],
        [
          {
            ExerciseCommand: {
              templateId: '#invoices:Invoice:Invoice',
              contractId: a.nodes[0]!.contract.contractId,
              choice: 'Cancel',
              choiceArgument: {},
            },
          },
        ],
      ),
      { userId: 'u' },
    );
    create(l, 'B');
    expect(l.engine.prune(9).ok).toBe(false);
    expect(l.engine.prune(2)).toEqual({ ok: true, value: null });
    expect(l.engine.prunedUpToInclusive()).toBe(2);
    expect(l.engine.transactionsBetween(0, 3).map((t) => t.offset)).toEqual([3]);
    expect(l.engine.transactionById(a.updateId)).toBeUndefined();
    expect(l.engine.checkOffset(1, 'begin_exclusive')?.code).toBe(
      'PARTICIPANT_PRUNED_DATA_ACCESSED',
    );
    expect(l.engine.checkOffset(1, 'begin_exclusive')?.context).toEqual({ earliest_offset: '2' });
    expect(l.engine.checkOffset(4, 'end_inclusive')?.code).toBe('OFFSET_AFTER_LEDGER_END');
    expect(l.engine.checkOffset(2, 'begin_exclusive')).toBeNull();
    // The archived contract is gone from events-by-contract-id; the active one stays.
    expect(
      l.engine.eventsByContractId(a.nodes[0]!.contract.contractId, {
        filtersByParty: { [l.issuer]: {} },
      }),
    ).toBeNull();
    expect(l.engine.activeContractsAt(3, { filtersByParty: { [l.issuer]: {} } })).toHaveLength(1);
  });
});

describe('speed', () => {
  // Speed is measured by `npm run bench` (sandbox section), not asserted here: the machines are noisy.
  it('commits thousands of CreateAndExercise commands in a row, each at its own offset', () => {
    const l = invoiceLedger();
    const run = (i: number) =>
      l.engine.submit(
        commands(
          [l.issuer],
          [
            {
              CreateAndExerciseCommand: {
                templateId: '#invoices:Invoice:Invoice',
                createArguments: invoiceArgs(l, { reference: `R${i}` }),
                choice: 'Remind',
                choiceArgument: {},
              },
            },
          ],
        ),
        { userId: 'u' },
      );
    for (let i = 0; i < 500; i++) run(i);
    const n = 5000;
    for (let i = 500; i < 500 + n; i++) {
      if (!run(i).ok) throw new Error('failed');
    }
    expect(l.engine.ledgerEnd()).toBe(500 + n);
  });
});

describe('interpret, then commit', () => {
  it('interpretation changes nothing; a commit right after it lands, a stale one is refused', () => {
    const l = invoiceLedger();
    const cmd = (reference: string) =>
      commands(
        [l.issuer],
        [
          {
            CreateCommand: {
              templateId: '#invoices:Invoice:Invoice',
              createArguments: invoiceArgs(l, { reference }),
            },
          },
        ],
      );
    const pending = l.engine.interpret(cmd('I-1'), { userId: 'u' });
    if (!pending.ok) throw new Error(pending.error.cause);
    expect(l.engine.ledgerEnd()).toBe(0);
    const stale = l.engine.interpret(cmd('I-2'), { userId: 'u' });
    const tx = l.engine.commit(pending.value);
    expect(tx.offset).toBe(1);
    expect(l.engine.ledgerEnd()).toBe(1);
    if (!stale.ok) throw new Error(stale.error.cause);
    expect(() => l.engine.commit(stale.value)).toThrow(/ledger end moved/);
  });
});
