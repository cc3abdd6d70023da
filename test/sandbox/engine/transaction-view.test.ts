import { describe, expect, it } from 'vitest';
import type { ContractRecord } from '../../../src/sandbox/engine/committed-transaction.js';
import { InterpreterAbort } from '../../../src/sandbox/engine/interpreter-abort.js';
import {
  TransactionView,
  type InterpreterLedger,
} from '../../../src/sandbox/engine/transaction-view.js';
import type { TemplateDef } from '../../../src/sandbox/model/model-types.js';
import { invoicesModel } from './invoice-ledger.js';

const template = invoicesModel.templates.get('Invoice:Invoice') as TemplateDef;
const other = [...invoicesModel.templates.values()].find((t) => t !== template) as TemplateDef;

function contract(id: string, stakeholders: string[], keyText: string | null = null) {
  return { contractId: id, template, stakeholders, keyText } as unknown as ContractRecord;
}

function ledger(active: ContractRecord[], keys: Record<string, string> = {}): InterpreterLedger {
  return {
    resolveTemplate: () => ({ kind: 'template', template }),
    isKnownParty: () => true,
    activeContract: (id) => active.find((c) => c.contractId === id),
    activeContractByKey: (_t, keyText) => keys[keyText],
    nextContractId: () => 'new',
  };
}

function failure(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (error instanceof InterpreterAbort) return error.error.code;
    throw error;
  }
}

describe('TransactionView', () => {
  it("sees the ledger's active contracts visible to the readers", () => {
    const view = new TransactionView(
      ledger([contract('a', ['P']), contract('b', ['Q'])]),
      new Set(['P']),
    );
    const expected = { kind: 'template', template } as const;
    expect(view.fetchVisible('a', expected).contractId).toBe('a');
    expect(failure(() => view.fetchVisible('b', expected))).toBe('CONTRACT_NOT_FOUND');
    expect(failure(() => view.fetchVisible('zz', expected))).toBe('CONTRACT_NOT_FOUND');
    expect(failure(() => view.fetchVisible('a', { kind: 'template', template: other }))).toBe(
      'WRONGLY_TYPED_CONTRACT',
    );
  });

  it('overlays its own creates and archives, and reports what it archived of the ledger', () => {
    const a = contract('a', ['P'], 'ka');
    const view = new TransactionView(ledger([a], { ka: 'a' }), new Set(['P']));
    const mine = contract('m', ['Q'], 'km');
    view.create(mine);
    // Its own creates are visible even to non-stakeholders, and found by key.
    expect(view.fetchVisible('m', { kind: 'template', template })).toBe(mine);
    expect(view.lookupKey(template, 'km')).toBe('m');
    expect(view.recordExercise(a, true)).toBe(true);
    expect(view.recordExercise(mine, true)).toBe(false);
    expect(view.lookupKey(template, 'ka')).toBeUndefined();
    expect(view.lookupKey(template, 'km')).toBeUndefined();
    expect(failure(() => view.fetchVisible('a', { kind: 'template', template }))).toBe(
      'CONTRACT_NOT_FOUND',
    );
    expect(view.created()).toEqual([]);
    expect(view.archivedBefore()).toEqual([a]);
    expect(view.archivedHere('m')).toBe(true);
  });

  it('keeps a contract exercised without consuming it', () => {
    const a = contract('a', ['P']);
    const view = new TransactionView(ledger([a]), new Set(['P']));
    expect(view.recordExercise(a, false)).toBe(true);
    expect(view.archivedBefore()).toEqual([]);
    expect(view.fetchVisible('a', { kind: 'template', template })).toBe(a);
  });
});
