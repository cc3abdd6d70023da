import { beforeAll, describe, expect, it } from 'vitest';
import type {
  CumulativeFilter,
  EventFormat,
  JsTransaction,
  TransactionFormat,
} from '../../../src/ledger/wire/wire-types.js';
import type { CommittedTransaction } from '../../../src/sandbox/engine/committed-transaction.js';
import { specValidator } from '../../support/spec-validator.js';
import { commands, invoiceArgs, invoiceLedger, type InvoiceLedger } from './invoice-ledger.js';

const spec = specValidator('openapi-3.5');

const wildcard = (blob = false): CumulativeFilter => ({
  identifierFilter: { WildcardFilter: { value: { includeCreatedEventBlob: blob } } },
});
const template = (templateId: string, blob = false): CumulativeFilter => ({
  identifierFilter: { TemplateFilter: { value: { templateId, includeCreatedEventBlob: blob } } },
});
const iface = (interfaceId: string): CumulativeFilter => ({
  identifierFilter: {
    InterfaceFilter: {
      value: { interfaceId, includeInterfaceView: true, includeCreatedEventBlob: false },
    },
  },
});

const format = (
  eventFormat: EventFormat,
  shape: 'ACS_DELTA' | 'LEDGER_EFFECTS',
): TransactionFormat => ({
  eventFormat,
  transactionShape: `TRANSACTION_SHAPE_${shape}`,
});

function kinds(tx: JsTransaction | null): string[] {
  return (tx?.events ?? []).map((e) => {
    const [kind, body] = Object.entries(e)[0]! as [
      string,
      { nodeId: number; witnessParties: string[] },
    ];
    return `${kind}#${body.nodeId}`;
  });
}

function validated(tx: JsTransaction | null): JsTransaction | null {
  if (tx !== null) spec.assert('JsTransaction', tx);
  return tx;
}

describe('projections of a nested CreateAndExercise', () => {
  let l: InvoiceLedger;
  let tx: CommittedTransaction;
  let invoice: string;

  beforeAll(() => {
    l = invoiceLedger();
    const created = l.engine.submit(
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
        { workflowId: 'wf' },
      ),
      { userId: 't' },
    );
    if (!created.ok) throw new Error(created.error.cause);
    invoice = created.transaction.nodes[0]!.contract.contractId;
    const r = l.engine.submit(
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
    );
    if (!r.ok) throw new Error(r.error.cause);
    tx = r.transaction;
  });

  it('ACS_DELTA for the payer: the archive of the invoice and the payment create', () => {
    const out = validated(
      l.engine.projectTransaction(
        tx,
        format({ filtersByParty: { [l.payer]: { cumulative: [wildcard()] } } }, 'ACS_DELTA'),
      ),
    );
    expect(kinds(out)).toEqual(['ArchivedEvent#2', 'CreatedEvent#3']);
    expect(out!.commandId).toBe(tx.commandId);
    expect(out!.offset).toBe(2);
    const archived = out!.events[0]! as {
      ArchivedEvent: { contractId: string; witnessParties: string[]; templateId: string };
    };
    expect(archived.ArchivedEvent.contractId).toBe(invoice);
    expect(archived.ArchivedEvent.witnessParties).toEqual([l.payer]);
    expect(archived.ArchivedEvent.templateId).toBe(`${l.pkg}:Invoice:Invoice`);
  });

  it('ACS_DELTA for the issuer hides the command id and shows the same ACS changes', () => {
    const out = validated(
      l.engine.projectTransaction(tx, format({ filtersByParty: { [l.issuer]: {} } }, 'ACS_DELTA')),
    );
    expect(kinds(out)).toEqual(['ArchivedEvent#2', 'CreatedEvent#3']);
    expect(out!.commandId).toBe('');
  });

  it('LEDGER_EFFECTS for the payer: every node, with exercise details', () => {
    const out = validated(
      l.engine.projectTransaction(
        tx,
        format({ filtersByParty: { [l.payer]: {} } }, 'LEDGER_EFFECTS'),
      ),
    );
    expect(kinds(out)).toEqual([
      'CreatedEvent#0',
      'ExercisedEvent#1',
      'ExercisedEvent#2',
      'CreatedEvent#3',
    ]);
    const ex = out!.events[1]! as { ExercisedEvent: Record<string, unknown> };
    expect(ex.ExercisedEvent).toMatchObject({
      choice: 'AcceptInvoice',
      consuming: true,
      lastDescendantNodeId: 3,
      actingParties: [l.payer],
      acsDelta: false,
      choiceArgument: { invoice },
    });
    const created = out!.events[0]! as { CreatedEvent: Record<string, unknown> };
    expect(created.CreatedEvent.acsDelta).toBe(false);
    expect(created.CreatedEvent).not.toHaveProperty('contractKey');
  });

  it('LEDGER_EFFECTS for the issuer: only what it witnesses', () => {
    const out = validated(
      l.engine.projectTransaction(
        tx,
        format({ filtersByParty: { [l.issuer]: {} } }, 'LEDGER_EFFECTS'),
      ),
    );
    expect(kinds(out)).toEqual(['ExercisedEvent#2', 'CreatedEvent#3']);
    const ex = out!.events[0]! as {
      ExercisedEvent: { witnessParties: string[]; acsDelta: boolean };
    };
    expect(ex.ExercisedEvent.witnessParties).toEqual([l.issuer]);
    expect(ex.ExercisedEvent.acsDelta).toBe(true);
  });

  it('returns null when nothing is visible', () => {
    expect(
      l.engine.projectTransaction(
        tx,
        format({ filtersByParty: { [l.other]: {} } }, 'LEDGER_EFFECTS'),
      ),
    ).toBeNull();
    expect(
      l.engine.projectTransaction(
        tx,
        format(
          {
            filtersByParty: { [l.payer]: { cumulative: [template('#invoices:Payment:Receipt')] } },
          },
          'ACS_DELTA',
        ),
      ),
    ).toBeNull();
  });

  it('filtersForAnyParty shows everything with all witnesses', () => {
    const out = validated(
      l.engine.projectTransaction(
        tx,
        format({ filtersForAnyParty: { cumulative: [wildcard()] } }, 'LEDGER_EFFECTS'),
      ),
    );
    expect(kinds(out)).toHaveLength(4);
    const payment = out!.events[3]! as { CreatedEvent: { witnessParties: string[] } };
    expect(payment.CreatedEvent.witnessParties).toEqual([l.issuer, l.payer].sort());
  });

  it('template filters match by package name or by package id', () => {
    for (const id of ['#invoices:Payment:Payment', `${l.pkg}:Payment:Payment`]) {
      const out = validated(
        l.engine.projectTransaction(
          tx,
          format(
            { filtersByParty: { [l.payer]: { cumulative: [template(id, true)] } } },
            'ACS_DELTA',
          ),
        ),
      );
      expect(kinds(out)).toEqual(['CreatedEvent#3']);
      const created = out!.events[0]! as {
        CreatedEvent: { createdEventBlob: string; templateId: string; packageName: string };
      };
      expect(created.CreatedEvent.createdEventBlob).toMatch(/^[A-Za-z0-9+/]+=*$/);
      expect(
        (
          JSON.parse(Buffer.from(created.CreatedEvent.createdEventBlob, 'base64').toString()) as {
            contractId: string;
          }
        ).contractId,
      ).toBe(tx.nodes[3]!.contract.contractId);
      expect(created.CreatedEvent.templateId).toBe(`${l.pkg}:Payment:Payment`);
      expect(created.CreatedEvent.packageName).toBe('invoices');
    }
  });

  it('per-party filters combine: each party sees its own templates', () => {
    const out = validated(
      l.engine.projectTransaction(
        tx,
        format(
          {
            filtersByParty: {
              [l.payer]: { cumulative: [template('#invoices:Automation:InvoiceAcceptor')] },
              [l.issuer]: { cumulative: [template('#invoices:Invoice:Invoice')] },
            },
          },
          'LEDGER_EFFECTS',
        ),
      ),
    );
    expect(kinds(out)).toEqual(['CreatedEvent#0', 'ExercisedEvent#1', 'ExercisedEvent#2']);
    const accept = out!.events[2]! as { ExercisedEvent: { witnessParties: string[] } };
    expect(accept.ExercisedEvent.witnessParties).toEqual([l.issuer]);
  });

  it('interface filters match implementing templates and render the view', () => {
    const acs = l.engine.activeContractsAt(1, {
      filtersByParty: { [l.payer]: { cumulative: [iface('#invoices:Payment:Payable')] } },
    });
    expect(acs).toHaveLength(1);
    for (const a of acs) spec.assert('JsGetActiveContractsResponse', a);
    const entry = acs[0]!.contractEntry as {
      JsActiveContract: { createdEvent: { interfaceViews: unknown[]; contractKey: unknown } };
    };
    expect(entry.JsActiveContract.createdEvent.interfaceViews).toEqual([
      {
        interfaceId: `${l.pkg}:Payment:Payable`,
        viewStatus: { code: 0, message: '', details: [] },
        viewValue: { payer: l.payer, amount: '999.99', currency: 'USD' },
        implementationPackageId: l.pkg,
      },
    ]);
    expect(entry.JsActiveContract.createdEvent.contractKey).toEqual({
      issuer: l.issuer,
      reference: 'INV-1',
    });
  });

  it('validates filters', () => {
    expect(
      l.engine.validateEventFormat({
        filtersByParty: { [l.payer]: { cumulative: [template('#invoices:X:Y')] } },
      })?.code,
    ).toBe('TEMPLATES_OR_INTERFACES_NOT_FOUND');
    expect(
      l.engine.validateEventFormat({
        filtersByParty: { [l.payer]: { cumulative: [template('#nope:X:Y')] } },
      })?.code,
    ).toBe('PACKAGE_NAMES_NOT_FOUND');
    expect(
      l.engine.validateEventFormat({ filtersByParty: { [l.payer]: { cumulative: [wildcard()] } } }),
    ).toBeNull();
    // A template filter takes templates and an interface filter interfaces, not the other kind.
    for (const wrongKind of [
      template('#invoices:Payment:Payable'),
      iface('#invoices:Invoice:Invoice'),
    ]) {
      const error = l.engine.validateEventFormat({
        filtersByParty: { [l.payer]: { cumulative: [wrongKind] } },
      });
      expect(error?.code).toBe('INVALID_ARGUMENT');
      expect(error?.cause).toMatch(/is not of the kind the filter expects/);
    }
  });

  it('ACS at an offset and events by contract id', () => {
    const before = l.engine.activeContractsAt(1, { filtersByParty: { [l.issuer]: {} } });
    const after = l.engine.activeContractsAt(2, { filtersByParty: { [l.issuer]: {} } });
    for (const a of [...before, ...after]) spec.assert('JsGetActiveContractsResponse', a);
    const ids = (xs: typeof before): string[] =>
      xs.map(
        (a) =>
          (a.contractEntry as { JsActiveContract: { createdEvent: { contractId: string } } })
            .JsActiveContract.createdEvent.contractId,
      );
    expect(ids(before)).toEqual([invoice]);
    expect(ids(after)).toEqual([tx.nodes[3]!.contract.contractId]);
    expect(before[0]!.workflowId).toBe('wf');

    const events = l.engine.eventsByContractId(invoice, { filtersByParty: { [l.payer]: {} } });
    spec.assert('JsGetEventsByContractIdResponse', events);
    expect(events!.created!.createdEvent.offset).toBe(1);
    expect(events!.archived!.archivedEvent.offset).toBe(2);
    expect(events!.archived!.archivedEvent.nodeId).toBe(2);
    expect(l.engine.eventsByContractId(invoice, { filtersByParty: { [l.other]: {} } })).toBeNull();
    expect(l.engine.eventsByContractId('00ff', { filtersByParty: { [l.payer]: {} } })).toBeNull();
  });
});
