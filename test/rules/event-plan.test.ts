import { describe, expect, it } from 'vitest';
import {
  candidatesFor,
  eventPlanFor,
  fieldTrieFor,
  type AnyEvent,
  type EventKind,
} from '../../src/rules/match-event.js';
import { indexRules } from '../../src/rules/rule-index.js';
import { PKG_V1, PKG_V2, archived, created, exercised, rules } from './rule-fixtures.js';

const RULES = rules(`
version: 1
rules:
  - id: on-create
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: event.createArgument.note == null
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [payer] }]
  - id: on-archive
    on: { archived: "#invoices:Invoice:Invoice", party: payer }
    when: event.contractId != ""
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [payer] }]
  - id: on-remind
    on: { exercised: { template: "#invoices:Invoice:Invoice", choice: Remind }, party: payer }
    when: event.choiceArgument.note == null
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [payer] }]
`);

describe('eventPlanFor', () => {
  it('gives what candidatesFor and fieldTrieFor give, remembered per kind and template id', () => {
    const index = indexRules(RULES);
    const events: [EventKind, AnyEvent][] = [
      ['created', created()],
      ['created', created({ templateId: `${PKG_V2}:Invoice:Invoice` })],
      ['created', created({ templateId: `${PKG_V1}:Payment:Payment` })],
      ['exercised', exercised({ consuming: false })],
      ['exercised', exercised({ consuming: true })],
      ['archived', archived()],
    ];
    for (let round = 0; round < 2; round++) {
      for (const [kind, event] of events) {
        const plan = eventPlanFor(index, kind, event);
        expect(plan.candidates).toEqual(candidatesFor(index, kind, event));
        expect(plan.fieldReads).toEqual(fieldTrieFor(index, kind, event));
      }
    }
    // A consuming exercise is also an archive; a non-consuming one is not.
    const ids = (kind: EventKind, event: AnyEvent) =>
      eventPlanFor(index, kind, event).candidates.map((c) => c.rule.id);
    expect(ids('exercised', exercised({ consuming: true }))).toEqual(['on-archive', 'on-remind']);
    expect(ids('exercised', exercised({ consuming: false }))).toEqual(['on-remind']);
  });
});
