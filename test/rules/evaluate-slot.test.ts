import { describe, expect, it } from 'vitest';
import { commandIdFor } from '../../src/rules/command-id.js';
import { evaluateSlot, startOfDay } from '../../src/rules/evaluate-slot.js';
import { specValidator } from '../support/spec-validator.js';
import { PARTIES, PKG_V1, created, rules } from './rule-fixtures.js';

const spec = specValidator('openapi-3.5');

const set = rules(`
version: 1
rules:
  - id: weekday-reminders
    schedule: { cron: "0 9 * * MON-FRI", timezone: Pacific/Auckland }
    forEach: { activeContracts: "#invoices:Invoice:Invoice", party: issuer }
    when: 'date(contract.createArgument.due) < today && now - contract.createdAt > duration("1d")'
    then:
      - exercise:
          template: "#invoices:Invoice:Invoice"
          contractId: "\${{ contract.contractId }}"
          choice: Remind
          choiceArgument: { note: "Reminder of \${{ today }}" }
        actAs: [issuer]
  - id: daily-audit
    schedule: { cron: "0 0 * * *" }
    then:
      - create:
          template: "#invoices:Audit:Entry"
          createArguments: { at: "\${{ now }}", by: "\${{ parties.auditor }}" }
        actAs: [auditor]
`);
const reminders = set.rules[0]!;
const audit = set.rules[1]!;
const CONTEXT = { parties: PARTIES, snapshotOffset: 77 };

describe('evaluateSlot', () => {
  // 2025-03-03T20:00Z is already Tuesday 4 March 09:00 in Auckland (UTC+13).
  const slot = new Date('2025-03-03T20:00:00Z');
  const invoice = created({
    witnessParties: [PARTIES.issuer],
    createArgument: { due: '2025-03-03', reference: 'INV-9' },
    createdAt: '2025-03-01T00:00:00Z',
  });

  it('fires per contract with the slot as now and today in the rule time zone', () => {
    const r = evaluateSlot(reminders, slot, invoice, CONTEXT);
    expect(r.errors).toEqual([]);
    expect(r.intents).toHaveLength(1);
    const intent = r.intents[0]!;
    expect(intent.command).toEqual({
      ExerciseCommand: {
        templateId: '#invoices:Invoice:Invoice',
        contractId: invoice.contractId,
        choice: 'Remind',
        choiceArgument: { note: 'Reminder of 2025-03-04T00:00:00.000Z' },
      },
    });
    expect(intent.triggerKey).toEqual({
      kind: 'slot',
      slot: Date.parse('2025-03-03T20:00:00.000Z'),
      contractId: invoice.contractId,
    });
    expect(intent.offset).toBe(77);
    expect(intent.commandId).toBe(
      commandIdFor({
        ruleId: 'weekday-reminders',
        revision: 1,
        actAs: [PARTIES.issuer],
        triggerKey: intent.triggerKey,
        actionIndex: 0,
      }),
    );
    expect(r.explanations[0]).toMatchObject({ fired: true, contractId: invoice.contractId });
    spec.assert('Command', intent.command);
  });

  it('gives each slot and each contract its own commandId', () => {
    const other = created({ ...invoice, contractId: '00' + 'e'.repeat(64) });
    const a = evaluateSlot(reminders, slot, invoice, CONTEXT).intents[0]!.commandId;
    const b = evaluateSlot(reminders, slot, other, CONTEXT).intents[0]!.commandId;
    const c = evaluateSlot(reminders, new Date('2025-03-04T20:00:00Z'), invoice, CONTEXT)
      .intents[0]!.commandId;
    expect(new Set([a, b, c]).size).toBe(3);
    expect(evaluateSlot(reminders, slot, invoice, CONTEXT).intents[0]!.commandId).toBe(a);
  });

  it('does not fire when the condition is false on that day', () => {
    const notDue = created({ ...invoice, createArgument: { due: '2025-03-04' } });
    const r = evaluateSlot(reminders, slot, notDue, CONTEXT);
    expect(r.intents).toEqual([]);
    expect(r.explanations[0]!.conditions[0]!.outcome).toBe('false');
  });

  it('explains contracts of another template or not seen by the forEach party', () => {
    const other = created({ ...invoice, templateId: `${PKG_V1}:Invoice:Draft` });
    expect(evaluateSlot(reminders, slot, other, CONTEXT).explanations[0]!.mismatch?.reason).toBe(
      'other-template',
    );
    const hidden = created({ ...invoice, witnessParties: [PARTIES.payer] });
    expect(evaluateSlot(reminders, slot, hidden, CONTEXT).explanations[0]!.mismatch?.reason).toBe(
      'party-not-witness',
    );
  });

  it('reports a failing expression per contract, without throwing', () => {
    const broken = created({ ...invoice, createArgument: { due: 'soon' } });
    const r = evaluateSlot(reminders, slot, broken, CONTEXT);
    expect(r.intents).toEqual([]);
    expect(r.errors[0]).toMatchObject({ ruleId: 'weekday-reminders', phase: 'when' });
    expect(r.errors[0]!.message).toMatch(/"soon" is not a date/);
  });

  it('fires once per slot without forEach', () => {
    const at = new Date('2025-03-04T00:00:00Z');
    const r = evaluateSlot(audit, at, null, CONTEXT);
    expect(r.intents).toHaveLength(1);
    expect(r.intents[0]!.command).toEqual({
      CreateCommand: {
        templateId: '#invoices:Audit:Entry',
        createArguments: { at: '2025-03-04T00:00:00.000Z', by: PARTIES.auditor },
      },
    });
    expect(r.intents[0]!.triggerKey).toEqual({
      kind: 'slot',
      slot: Date.parse('2025-03-04T00:00:00.000Z'),
      contractId: null,
    });
  });

  it('refuses calls that do not fit the rule', () => {
    expect(() => evaluateSlot(audit, slot, invoice, CONTEXT)).toThrow(/no forEach/);
    expect(() => evaluateSlot(reminders, slot, null, CONTEXT)).toThrow(/has forEach/);
    const eventRule = rules(`
version: 1
rules:
  - id: ev
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - create: { template: "#invoices:Audit:Entry", createArguments: {} }
        actAs: [payer]
`).rules[0]!;
    expect(() => evaluateSlot(eventRule, slot, null, CONTEXT)).toThrow(/not a schedule rule/);
  });
});

describe('startOfDay', () => {
  it('is the UTC midnight of the local calendar day', () => {
    const instant = new Date('2025-03-03T20:00:00Z');
    expect(startOfDay(instant, 'UTC').toISOString()).toBe('2025-03-03T00:00:00.000Z');
    expect(startOfDay(instant, 'Pacific/Auckland').toISOString()).toBe('2025-03-04T00:00:00.000Z');
    expect(startOfDay(new Date('2025-03-03T02:00:00Z'), 'America/New_York').toISOString()).toBe(
      '2025-03-02T00:00:00.000Z',
    );
  });
});
