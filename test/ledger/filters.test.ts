import { describe, expect, it } from 'vitest';
import { eventFormat, transactionFormat, updateFormat } from '../../src/ledger/filters.js';
import { LedgerUsageError } from '../../src/ledger/ledger-usage-error.js';
import { specValidator } from '../support/spec-validator.js';

const v35 = specValidator('openapi-3.5');
const v34 = specValidator('openapi-3.4');

function valid(schema: string, value: unknown): void {
  v35.assert(schema, value);
  v34.assert(schema, value);
}

describe('eventFormat', () => {
  it('is a verbose wildcard per party without templates or interfaces', () => {
    const f = eventFormat({ parties: ['Alice::1', 'Bob::1'] });
    valid('EventFormat', f);
    const wildcard = {
      cumulative: [
        { identifierFilter: { WildcardFilter: { value: { includeCreatedEventBlob: false } } } },
      ],
    };
    expect(f).toEqual({
      filtersByParty: { 'Alice::1': wildcard, 'Bob::1': wildcard },
      verbose: true,
    });
  });

  it('passes template and interface ids through as given', () => {
    const f = eventFormat({
      parties: ['Alice::1'],
      templates: ['#invoices:Invoice:Invoice', '1220abcd:Main.Sub:Iou'],
      interfaces: ['#iface:Api:Asset'],
      includeCreatedEventBlob: true,
      verbose: false,
    });
    valid('EventFormat', f);
    expect(f.verbose).toBe(false);
    expect(f.filtersByParty?.['Alice::1']?.cumulative).toEqual([
      {
        identifierFilter: {
          TemplateFilter: {
            value: { templateId: '#invoices:Invoice:Invoice', includeCreatedEventBlob: true },
          },
        },
      },
      {
        identifierFilter: {
          TemplateFilter: {
            value: { templateId: '1220abcd:Main.Sub:Iou', includeCreatedEventBlob: true },
          },
        },
      },
      {
        identifierFilter: {
          InterfaceFilter: {
            value: {
              interfaceId: '#iface:Api:Asset',
              includeInterfaceView: true,
              includeCreatedEventBlob: true,
            },
          },
        },
      },
    ]);
  });

  it('uses filtersForAnyParty for anyParty, with or without listed parties', () => {
    const f = eventFormat({ parties: [], anyParty: true, templates: ['#p:M:T'] });
    valid('EventFormat', f);
    expect(f.filtersByParty).toEqual({});
    expect(f.filtersForAnyParty?.cumulative).toHaveLength(1);
  });

  it('gives each party its own filter objects', () => {
    const f = eventFormat({ parties: ['A::1', 'B::1'] });
    expect(f.filtersByParty?.['A::1']).not.toBe(f.filtersByParty?.['B::1']);
  });

  it('refuses no parties, and ids that are not three colon-separated parts', () => {
    expect(() => eventFormat({ parties: [] })).toThrow(LedgerUsageError);
    expect(() => eventFormat({ parties: ['A::1'], templates: ['Invoice'] })).toThrow(
      /#package-name:Module:Entity/,
    );
  });
});

describe('transactionFormat and updateFormat', () => {
  const events = eventFormat({ parties: ['Alice::1'] });

  it('defaults to ACS_DELTA and accepts LEDGER_EFFECTS', () => {
    valid('TransactionFormat', transactionFormat(events));
    expect(transactionFormat(events).transactionShape).toBe('TRANSACTION_SHAPE_ACS_DELTA');
    expect(transactionFormat(events, 'TRANSACTION_SHAPE_LEDGER_EFFECTS').transactionShape).toBe(
      'TRANSACTION_SHAPE_LEDGER_EFFECTS',
    );
  });

  it('builds each kind of update only when asked', () => {
    const tx = transactionFormat(events);
    const u = updateFormat({ transactions: tx, reassignments: events, topologyParties: [] });
    valid('UpdateFormat', u);
    expect(u).toEqual({
      includeTransactions: tx,
      includeReassignments: events,
      includeTopologyEvents: { includeParticipantAuthorizationEvents: { parties: [] } },
    });
    expect(Object.keys(updateFormat({ transactions: tx }))).toEqual(['includeTransactions']);
  });

  it('refuses an update format that selects nothing', () => {
    expect(() => updateFormat({})).toThrow(LedgerUsageError);
  });
});
