import { describe, expect, it } from 'vitest';
import type {
  CommittedTransaction,
  ExerciseNode,
} from '../../../src/sandbox/engine/committed-transaction.js';
import type { SubmitOutcome } from '../../../src/sandbox/engine/engine-types.js';
import { commands, invoiceArgs, invoiceLedger, type InvoiceLedger } from './invoice-ledger.js';

function committed(r: SubmitOutcome): CommittedTransaction {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.cause}`);
  return r.transaction;
}

function createInvoice(l: InvoiceLedger, extra: Record<string, unknown> = {}): string {
  const tx = committed(
    l.engine.submit(
      commands(
        [l.issuer],
        [
          {
            CreateCommand: {
              templateId: '#invoices:Invoice:Invoice',
              createArguments: invoiceArgs(l, extra),
            },
          },
        ],
      ),
      { userId: 'tester' },
    ),
  );
  return tx.nodes[0]!.contract.contractId;
}

describe('create', () => {
  it('commits a create with normalised values and stakeholders', () => {
    const l = invoiceLedger();
    const cid = createInvoice(l);
    expect(cid).toMatch(/^00[0-9a-f]{64}$/);
    const tx = l.engine.transactionByOffset(1)!;
    expect(tx.offset).toBe(1);
    expect(tx.updateId).toMatch(/^1220[0-9a-f]{64}$/);
    const node = tx.nodes[0]!;
    expect(node.kind).toBe('create');
    expect(node.contract.argument).toEqual({ ...invoiceArgs(l), amount: '999.99' });
    expect(node.contract.signatories).toEqual([l.issuer]);
    expect(node.contract.observers).toEqual([l.payer]);
    expect(node.contract.key).toEqual({ issuer: l.issuer, reference: 'INV-1' });
    expect(node.acsDelta).toBe(true);
    expect(node.witnesses).toEqual([l.issuer, l.payer].sort());
    // Instant.toString: no fraction when it is zero.
    expect(node.contract.createdAt).toBe('2025-01-15T12:00:00Z');
    expect(l.engine.ledgerEnd()).toBe(1);
  });

  it('is deterministic for a seed', () => {
    expect(createInvoice(invoiceLedger(7))).toBe(createInvoice(invoiceLedger(7)));
    expect(createInvoice(invoiceLedger(7))).not.toBe(createInvoice(invoiceLedger(8)));
  });

  it('rejects a missing field, an unexpected field and a bad value', () => {
    const l = invoiceLedger();
    const submit = (args: Record<string, unknown>): SubmitOutcome =>
      l.engine.submit(
        commands(
          [l.issuer],
          [{ CreateCommand: { templateId: '#invoices:Invoice:Invoice', createArguments: args } }],
        ),
        { userId: 't' },
      );
    const { reference: _omit, ...missing } = invoiceArgs(l);
    const r1 = submit(missing);
    expect(r1.ok === false && [r1.error.code, r1.error.category]).toEqual([
      'COMMAND_PREPROCESSING_FAILED',
      8,
    ]);
    expect(r1.ok === false && r1.error.cause).toMatch(/Missing non-optional fields: reference/);
    const r2 = submit(invoiceArgs(l, { colour: 'red' }));
    expect(r2.ok === false && [r2.error.code, r2.error.category, r2.error.cause]).toEqual([
      'INVALID_ARGUMENT',
      8,
      'Unexpected fields: colour',
    ]);
    const r3 = submit(invoiceArgs(l, { amount: '1.234' }));
    expect(r3.ok === false && r3.error.code).toBe('INVALID_ARGUMENT');
    const r4 = submit(invoiceArgs(l, { due: '2025-13-01' }));
    expect(r4.ok === false && r4.error.cause).toMatch(/due: expected Date/);
    expect(l.engine.ledgerEnd()).toBe(0);
  });

  it('checks the ensure clause', () => {
    const l = invoiceLedger();
    const r = l.engine.submit(
      commands(
        [l.issuer],
        [
          {
            CreateCommand: {
              templateId: '#invoices:Invoice:Invoice',
              createArguments: invoiceArgs(l, { amount: '0' }),
            },
          },
        ],
      ),
      { userId: 't' },
    );
    expect(r.ok === false && [r.error.code, r.error.category]).toEqual([
      'DAML_INTERPRETATION_ERROR',
      9,
    ]);
  });

  it('needs every signatory among actAs', () => {
    const l = invoiceLedger();
    const r = l.engine.submit(
      commands(
        [l.payer],
        [
          {
            CreateCommand: {
              templateId: '#invoices:Invoice:Invoice',
              createArguments: invoiceArgs(l),
            },
          },
        ],
      ),
      { userId: 't' },
    );
    expect(r.ok === false && [r.error.code, r.error.category, r.error.grpcCode]).toEqual([
      'DAML_AUTHORIZATION_ERROR',
      8,
      3,
    ]);
  });

  it('rejects unknown templates and packages', () => {
    const l = invoiceLedger();
    const submit = (templateId: string): SubmitOutcome =>
      l.engine.submit(
        commands([l.issuer], [{ CreateCommand: { templateId, createArguments: {} } }]),
        { userId: 't' },
      );
    const a = submit('#invoices:Invoice:Nope');
    expect(a.ok === false && [a.error.code, a.error.category]).toEqual([
      'TEMPLATES_OR_INTERFACES_NOT_FOUND',
      11,
    ]);
    const b = submit('#nopkg:Invoice:Invoice');
    expect(b.ok === false && [b.error.code, b.error.category]).toEqual([
      'PACKAGE_NAMES_NOT_FOUND',
      11,
    ]);
    const c = submit(`${'0'.repeat(64)}:Invoice:Invoice`);
    expect(c.ok === false && c.error.code).toBe('TEMPLATES_OR_INTERFACES_NOT_FOUND');
    const d = submit('Invoice:Invoice');
    expect(d.ok === false && d.error.code).toBe('INVALID_ARGUMENT');
  });

  it('accepts the package-id form', () => {
    const l = invoiceLedger();
    const r = l.engine.submit(
      commands(
        [l.issuer],
        [
          {
            CreateCommand: {
              templateId: `${l.pkg}:Invoice:Invoice`,
              createArguments: invoiceArgs(l),
            },
          },
        ],
      ),
      { userId: 't' },
    );
    expect(r.ok).toBe(true);
  });

  it('rejects a duplicate key', () => {
    const l = invoiceLedger();
    createInvoice(l);
    const r = l.engine.submit(
      commands(
        [l.issuer],
        [
          {
            CreateCommand: {
              templateId: '#invoices:Invoice:Invoice',
              createArguments: invoiceArgs(l),
            },
          },
        ],
      ),
      { userId: 't' },
    );
    expect(r.ok === false && [r.error.code, r.error.category]).toEqual([
      'DUPLICATE_CONTRACT_KEY',
      10,
    ]);
  });
});

describe('exercise', () => {
  it('archives with a consuming choice and reports CONTRACT_NOT_FOUND afterwards', () => {
    const l = invoiceLedger();
    const cid = createInvoice(l);
    const cancel = () =>
      l.engine.submit(
        commands(
          [l.issuer],
          [
            {
              ExerciseCommand: {
                templateId: '#invoices:Invoice:Invoice',
                contractId: cid,
                choice: 'Cancel',
                choiceArgument: {},
              },
            },
          ],
        ),
        { userId: 't' },
      );
    const tx = committed(cancel());
    const node = tx.nodes[0] as ExerciseNode;
    expect([node.kind, node.consuming, node.acsDelta, node.lastDescendantNodeId]).toEqual([
      'exercise',
      true,
      true,
      0,
    ]);
    expect(node.exerciseResult).toEqual({});
    expect(node.informees).toEqual([l.issuer, l.payer].sort());
    const again = cancel();
    expect(
      again.ok === false && [again.error.code, again.error.category, again.error.grpcCode],
    ).toEqual(['CONTRACT_NOT_FOUND', 11, 5]);
    expect(again.ok === false && again.error.resources).toEqual([['CONTRACT_ID', cid]]);
  });

  it('keeps the contract with a non-consuming choice and normalises its result', () => {
    const l = invoiceLedger();
    const cid = createInvoice(l);
    const tx = committed(
      l.engine.submit(
        commands(
          [l.issuer],
          [
            {
              ExerciseCommand: {
                templateId: '#invoices:Invoice:Invoice',
                contractId: cid,
                choice: 'Remind',
                choiceArgument: {},
              },
            },
          ],
        ),
        { userId: 't' },
      ),
    );
    const node = tx.nodes[0] as ExerciseNode;
    expect([node.consuming, node.acsDelta, node.exerciseResult]).toEqual([
      false,
      false,
      'Please pay INV-1',
    ]);
    // Non-consuming: signatories + actors only.
    expect(node.informees).toEqual([l.issuer]);
    expect(node.choiceArgument).toEqual({ note: null });
  });

  it('needs the controllers among actAs', () => {
    const l = invoiceLedger();
    const cid = createInvoice(l);
    const r = l.engine.submit(
      commands(
        [l.issuer],
        [
          {
            ExerciseCommand: {
              templateId: '#invoices:Invoice:Invoice',
              contractId: cid,
              choice: 'Accept',
              choiceArgument: {},
            },
          },
        ],
      ),
      { userId: 't' },
    );
    expect(r.ok === false && r.error.code).toBe('DAML_AUTHORIZATION_ERROR');
  });

  it('hides contracts from parties that are not stakeholders (visibility)', () => {
    const l = invoiceLedger();
    const cid = createInvoice(l);
    const r = l.engine.submit(
      commands(
        [l.other],
        [
          {
            ExerciseCommand: {
              templateId: '#invoices:Invoice:Invoice',
              contractId: cid,
              choice: 'Cancel',
              choiceArgument: {},
            },
          },
        ],
      ),
      { userId: 't' },
    );
    expect(r.ok === false && [r.error.code, r.error.category]).toEqual(['CONTRACT_NOT_FOUND', 11]);
  });

  it('rejects an unknown choice and a wrong template', () => {
    const l = invoiceLedger();
    const cid = createInvoice(l);
    const a = l.engine.submit(
      commands(
        [l.issuer],
        [
          {
            ExerciseCommand: {
              templateId: '#invoices:Invoice:Invoice',
              contractId: cid,
              choice: 'Pay',
              choiceArgument: {},
            },
          },
        ],
      ),
      { userId: 't' },
    );
    expect(a.ok === false && a.error.code).toBe('COMMAND_PREPROCESSING_FAILED');
    const b = l.engine.submit(
      commands(
        [l.issuer],
        [
          {
            ExerciseCommand: {
              templateId: '#invoices:Payment:Payment',
              contractId: cid,
              choice: 'Archive',
              choiceArgument: {},
            },
          },
        ],
      ),
      { userId: 't' },
    );
    expect(b.ok === false && b.error.code).toBe('WRONGLY_TYPED_CONTRACT');
  });

  it("exercises an interface's choice through its id, not the template's own choices", () => {
    const l = invoiceLedger();
    const cid = createInvoice(l);
    const viaInterface = (choice: string) =>
      l.engine.submit(
        commands(
          [l.issuer],
          [
            {
              ExerciseCommand: {
                templateId: '#invoices:Payment:Payable',
                contractId: cid,
                choice,
                choiceArgument: {},
              },
            },
          ],
        ),
        { userId: 't' },
      );
    // Cancel is Invoice's own choice: as in Daml, an interface id does not reach it.
    const cancel = viaInterface('Cancel');
    expect(cancel.ok === false && [cancel.error.code, cancel.error.cause]).toEqual([
      'COMMAND_PREPROCESSING_FAILED',
      `unknown choice Cancel in interface ${l.pkg}:Payment:Payable`,
    ]);
    // Every interface has Archive, which is the template's own (by the signatories).
    const tx = committed(viaInterface('Archive'));
    const node = tx.nodes[0] as ExerciseNode;
    expect([node.interfaceId, node.choice, node.consuming]).toEqual([
      `${l.pkg}:Payment:Payable`,
      'Archive',
      true,
    ]);
    const wrong = l.engine.submit(
      commands(
        [l.payer],
        [
          {
            CreateAndExerciseCommand: {
              templateId: '#invoices:Automation:InvoiceAcceptor',
              createArguments: { payer: l.payer },
              choice: 'Archive',
              choiceArgument: {},
            },
          },
          {
            ExerciseCommand: {
              templateId: '#invoices:Payment:Payable',
              contractId: 'nope',
              choice: 'Archive',
              choiceArgument: {},
            },
          },
        ],
      ),
      { userId: 't' },
    );
    expect(wrong.ok === false && wrong.error.code).toBe('CONTRACT_NOT_FOUND');
  });

  it('exercises by key', () => {
    const l = invoiceLedger();
    const cid = createInvoice(l);
    const tx = committed(
      l.engine.submit(
        commands(
          [l.payer],
          [
            {
              ExerciseByKeyCommand: {
                templateId: '#invoices:Invoice:Invoice',
                contractKey: { issuer: l.issuer, reference: 'INV-1' },
                choice: 'Accept',
                choiceArgument: {},
              },
            },
          ],
        ),
        { userId: 't' },
      ),
    );
    expect(tx.nodes[0]!.contract.contractId).toBe(cid);
    const missing = l.engine.submit(
      commands(
        [l.payer],
        [
          {
            ExerciseByKeyCommand: {
              templateId: '#invoices:Invoice:Invoice',
              contractKey: { issuer: l.issuer, reference: 'INV-1' },
              choice: 'Accept',
              choiceArgument: {},
            },
          },
        ],
      ),
      { userId: 't' },
    );
    expect(missing.ok === false && [missing.error.code, missing.error.category]).toEqual([
      'CONTRACT_KEY_NOT_FOUND',
      11,
    ]);
  });
});

describe('CreateAndExercise with a nested exercise', () => {
  it('builds the LEDGER_EFFECTS tree in pre-order', () => {
    const l = invoiceLedger();
    const invoice = createInvoice(l);
    const tx = committed(
      l.engine.submit(
        commands(
          [l.payer],
          [
            {
              CreateAndExerciseCommand: {
                templateId: '#invoices:Automation:InvoiceAcceptor',
                createArguments: { payer: l.payer },
                choice: 'AcceptInvoice',
                choiceArgument: { invoice },
              },
            },
          ],
        ),
        { userId: 't' },
      ),
    );
    const shape = tx.nodes.map((n) => [
      n.nodeId,
      n.kind,
      n.contract.template.qualifiedName,
      n.kind === 'exercise' ? n.lastDescendantNodeId : null,
      n.acsDelta,
    ]);
    expect(shape).toEqual([
      // The acceptor is created and consumed in the same transaction: not in the ACS delta.
      [0, 'create', 'Automation:InvoiceAcceptor', null, false],
      [1, 'exercise', 'Automation:InvoiceAcceptor', 3, false],
      [2, 'exercise', 'Invoice:Invoice', 3, true],
      [3, 'create', 'Payment:Payment', null, true],
    ]);
    const payment = tx.nodes[3]!.contract.contractId;
    expect((tx.nodes[1] as ExerciseNode).exerciseResult).toBe(payment);
    expect((tx.nodes[2] as ExerciseNode).exerciseResult).toBe(payment);
    // The issuer is informed of the Accept (stakeholder) and therefore witnesses the Payment create.
    expect(tx.nodes[2]!.witnesses).toEqual([l.issuer, l.payer].sort());
    expect(tx.nodes[1]!.witnesses).toEqual([l.payer]);
    expect(tx.nodes[3]!.contract.argument).toMatchObject({
      payer: l.payer,
      payee: l.issuer,
      amount: '999.99',
    });
    expect(
      l.engine.activeContractsAt(l.engine.ledgerEnd(), { filtersByParty: { [l.payer]: {} } })
        .length,
    ).toBe(1);
  });

  it('fails the whole command on an assert, changing nothing', () => {
    const l = invoiceLedger();
    const invoice = createInvoice(l);
    const end = l.engine.ledgerEnd();
    // The issuer runs an acceptor for itself: the fetch is authorized, the assert is not met.
    const r = l.engine.submit(
      commands(
        [l.issuer],
        [
          {
            CreateCommand: {
              templateId: '#invoices:Automation:InvoiceAcceptor',
              createArguments: { payer: l.issuer },
            },
          },
          {
            CreateAndExerciseCommand: {
              templateId: '#invoices:Automation:InvoiceAcceptor',
              createArguments: { payer: l.issuer },
              choice: 'AcceptInvoice',
              choiceArgument: { invoice },
            },
          },
        ],
      ),
      { userId: 't' },
    );
    expect(r.ok === false && [r.error.code, r.error.category, r.error.grpcCode]).toEqual([
      'DAML_INTERPRETATION_ERROR',
      9,
      9,
    ]);
    expect(r.ok === false && r.error.cause).toMatch(/another payer/);
    expect(l.engine.ledgerEnd()).toBe(end);
    const acs = l.engine.activeContractsAt(end, { filtersByParty: { [l.issuer]: {} } });
    expect(
      acs.map(
        (a) =>
          a.contractEntry &&
          'JsActiveContract' in a.contractEntry &&
          a.contractEntry.JsActiveContract.createdEvent.contractId,
      ),
    ).toEqual([invoice]);
  });

  it('needs a stakeholder to authorize a fetch', () => {
    const l = invoiceLedger();
    const invoice = createInvoice(l);
    const r = l.engine.submit(
      commands(
        [l.other],
        [
          {
            CreateAndExerciseCommand: {
              templateId: '#invoices:Automation:InvoiceAcceptor',
              createArguments: { payer: l.other },
              choice: 'AcceptInvoice',
              choiceArgument: { invoice },
            },
          },
        ],
        { readAs: [l.payer] },
      ),
      { userId: 't' },
    );
    expect(r.ok === false && r.error.code).toBe('DAML_AUTHORIZATION_ERROR');
  });

  it('marks a create archived in the same transaction as not in the ACS delta', () => {
    const l = invoiceLedger();
    const tx = committed(
      l.engine.submit(
        commands(
          [l.issuer],
          [
            {
              CreateAndExerciseCommand: {
                templateId: '#invoices:Invoice:Invoice',
                createArguments: invoiceArgs(l),
                choice: 'Cancel',
                choiceArgument: {},
              },
            },
          ],
        ),
        { userId: 't' },
      ),
    );
    expect(tx.nodes.map((n) => n.acsDelta)).toEqual([false, false]);
    expect(l.engine.activeContractsAt(1, { filtersByParty: { [l.issuer]: {} } })).toEqual([]);
    // The key is free again.
    expect(createInvoice(l)).toMatch(/^00/);
  });

  it('rejects unknown submitting parties and empty commands', () => {
    const l = invoiceLedger();
    const a = l.engine.submit(
      commands(
        ['Ghost::1220ab'],
        [
          {
            CreateCommand: {
              templateId: '#invoices:Automation:InvoiceAcceptor',
              createArguments: { payer: 'Ghost::1220ab' },
            },
          },
        ],
      ),
      { userId: 't' },
    );
    expect(a.ok === false && a.error.code).toBe('PARTY_NOT_KNOWN_ON_LEDGER');
    const b = l.engine.submit(commands([l.payer], []), { userId: 't' });
    expect(b.ok === false && b.error.code).toBe('MISSING_FIELD');
  });
});
