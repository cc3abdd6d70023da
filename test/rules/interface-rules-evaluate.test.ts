import { describe, expect, it } from 'vitest';
import type { CreatedEvent } from '../../src/ledger/wire/wire-types.js';
import type { RuleSet } from '../../src/rules/compiled-rule.js';
import { evaluate } from '../../src/rules/evaluate.js';
import { evaluateSlot } from '../../src/rules/evaluate-slot.js';
import { formatExplanation } from '../../src/rules/format-explanation.js';
import { loadRules } from '../../src/rules/load-rules.js';
import { CATALOGUE, HOLDING_ID, HOLDINGS, TOKEN_ID } from './interface-fixtures.js';
import { archived, CONTEXT, created, exercised, input, PARTIES } from './rule-fixtures.js';

const RULES = `version: 1
rules:
  - id: big-holding
    on: { created: '#holdings:Holdings.Api:Holding', party: payer }
    when: decimal(event.view.amount) >= decimal("100") && event.view.note == null
    then:
      - exercise:
          interface: '#holdings:Holdings.Api:Holding'
          contractId: '\${{ event.contractId }}'
          choice: Transfer
          choiceArgument: { to: '\${{ parties.issuer }}', amount: '\${{ event.view.amount }}' }
        actAs: [payer]
  - id: holding-gone
    on: { archived: '#holdings:Holdings.Api:Holding', party: payer }
    then:
      - create: { template: '#tokens:Token:Token', createArguments: { issuer: '\${{ parties.issuer }}', owner: '\${{ parties.payer }}', amount: '1.0' } }
        actAs: [payer]
  - id: transferred
    on: { exercised: { interface: '#holdings:Holdings.Api:Holding', choice: Transfer }, party: payer }
    when: event.choiceArgument.to == parties.issuer
    then:
      - exercise: { template: '#tokens:Token:Token', contractId: '\${{ event.contractId }}', choice: Burn }
        actAs: [payer]
  - id: sweep
    schedule: { cron: '0 9 * * *' }
    forEach: { activeContracts: '#holdings:Holdings.Api:Holding', party: payer }
    when: event_free_placeholder
    then:
      - exercise: { template: '#tokens:Token:Token', contractId: '\${{ contract.contractId }}', choice: Burn }
        actAs: [payer]
`.replace('event_free_placeholder', 'contract.view.owner == parties.payer');

function load(): RuleSet {
  const { ruleSet, problems } = loadRules([{ path: 'r.yaml', text: RULES }], {
    parties: PARTIES,
    packages: CATALOGUE,
  });
  expect(problems).toEqual([]);
  return ruleSet;
}

const packageNameOf = (id: string) => CATALOGUE.packageNameOf(id);
const OK = { code: 0, message: '', details: [] };

function token(views: NonNullable<CreatedEvent['interfaceViews']>): CreatedEvent {
  return created({
    templateId: TOKEN_ID,
    packageName: 'tokens',
    createArgument: { issuer: PARTIES.issuer, owner: PARTIES.payer, amount: '500.0000000000' },
    interfaceViews: views,
  });
}

const VIEW = { owner: PARTIES.payer, amount: '500.0000000000' };

describe('interface rules match events by the interface ids they carry', () => {
  const set = load();

  it('a created event whose interface views include the interface: event.view is that view', () => {
    // The trailing Optional `note` is left out, as Canton 3.5 sends it: it reads null.
    const event = token([{ interfaceId: HOLDING_ID, viewStatus: OK, viewValue: VIEW }]);
    const r = evaluate(set, input({ CreatedEvent: event }), CONTEXT, { packageNameOf });
    expect(r.errors).toEqual([]);
    expect(r.intents.map((i) => [i.ruleId, i.command])).toEqual([
      [
        'big-holding',
        {
          ExerciseCommand: {
            templateId: '#holdings:Holdings.Api:Holding',
            contractId: event.contractId,
            choice: 'Transfer',
            choiceArgument: { to: PARTIES.issuer, amount: '500.0000000000' },
          },
        },
      ],
    ]);
  });

  it('another package with the same Module:Entity does not match, unless the id is unknown', () => {
    const foreign = `${'9'.repeat(64)}:Holdings.Api:Holding`;
    const event = token([{ interfaceId: foreign, viewStatus: OK, viewValue: VIEW }]);
    const other = (id: string) => (id === '9'.repeat(64) ? 'other-holdings' : packageNameOf(id));
    const r = evaluate(set, input({ CreatedEvent: event }), CONTEXT, { packageNameOf: other });
    expect(r.intents).toEqual([]);
    expect(r.explanations.map((e) => [e.ruleId, e.mismatch?.reason])).toEqual([
      ['big-holding', 'other-package'],
    ]);
    // Without a name for the id, Module:Entity decides.
    const fallback = evaluate(set, input({ CreatedEvent: event }), CONTEXT);
    expect(fallback.intents.map((i) => i.ruleId)).toEqual(['big-holding']);
  });

  it('a failed view is a rule error for that rule, not a crash', () => {
    const event = token([
      {
        interfaceId: HOLDING_ID,
        viewStatus: { code: 9, message: 'view computation failed: division by zero', details: [] },
      },
    ]);
    const r = evaluate(set, input({ CreatedEvent: event }), CONTEXT, { packageNameOf });
    expect(r.intents).toEqual([]);
    expect(r.errors).toMatchObject([
      {
        ruleId: 'big-holding',
        code: 'INTERFACE_VIEW_FAILED',
        message:
          'the participant could not compute the interface view of Holdings.Api:Holding (status 9): view computation failed: division by zero',
        pos: { line: 4 },
      },
    ]);
    expect(r.explanations[0]).toMatchObject({ triggerMatched: true, fired: false });
    expect(formatExplanation(r.explanations[0]!)).toEqual([
      'big-holding (r.yaml:3:5): failed',
      '  when[0] decimal(event.view.amount) >= decimal("100") && event.view.note == null → skipped',
      '  error at r.yaml:4:11: the participant could not compute the interface view of Holdings.Api:Holding (status 9): view computation failed: division by zero',
    ]);
  });

  it('a created event without the interface in its views is another template', () => {
    const r = evaluate(set, input({ CreatedEvent: token([]) }), CONTEXT, {
      packageNameOf,
      explain: 'all',
    });
    expect(r.explanations.find((e) => e.ruleId === 'big-holding')?.mismatch).toEqual({
      reason: 'other-template',
      message: `the event (template ${TOKEN_ID}) is not of the interface #holdings:Holdings.Api:Holding: its interface views are for no interface`,
    });
  });

  it('archives match by implementedInterfaces, as ArchivedEvent or consuming exercise', () => {
    const base = {
      templateId: TOKEN_ID,
      packageName: 'tokens',
      implementedInterfaces: [HOLDING_ID],
    };
    const a = evaluate(set, input({ ArchivedEvent: archived(base) }), CONTEXT, { packageNameOf });
    expect(a.intents.map((i) => i.ruleId)).toEqual(['holding-gone']);
    const consuming = exercised({
      ...base,
      choice: 'Burn',
      consuming: true,
      choiceArgument: {},
      witnessParties: [PARTIES.payer],
    });
    const e = evaluate(set, input({ ExercisedEvent: consuming }), CONTEXT, { packageNameOf });
    expect(e.intents.map((i) => i.ruleId)).toEqual(['holding-gone']);
    const none = evaluate(
      set,
      input({ ArchivedEvent: archived({ ...base, implementedInterfaces: [] }) }),
      CONTEXT,
    );
    expect(none.intents).toEqual([]);
  });

  it('an interface choice matches only when exercised through the interface (interfaceId)', () => {
    const transfer = {
      templateId: TOKEN_ID,
      packageName: 'tokens',
      choice: 'Transfer',
      choiceArgument: { to: PARTIES.issuer, amount: '1.0000000000' },
      witnessParties: [PARTIES.payer],
      implementedInterfaces: [HOLDING_ID],
    };
    const via = evaluate(
      set,
      input({ ExercisedEvent: exercised({ ...transfer, interfaceId: HOLDING_ID }) }),
      CONTEXT,
      { packageNameOf },
    );
    expect(via.intents.map((i) => i.ruleId)).toEqual(['transferred']);
    const direct = evaluate(set, input({ ExercisedEvent: exercised(transfer) }), CONTEXT, {
      packageNameOf,
      explain: 'all',
    });
    expect(direct.intents).toEqual([]);
    expect(
      direct.explanations.find((e) => e.ruleId === 'transferred')?.mismatch?.message,
    ).toContain('it was not exercised through an interface');
  });
});

describe('forEach over an interface: contract.view', () => {
  const rule = load().rules.find((r) => r.id === 'sweep')!;
  const slot = new Date('2025-03-04T09:00:00Z');
  const ctx = { parties: PARTIES, snapshotOffset: 7, packageNameOf };

  it("fires with the contract's view", () => {
    const contract = token([{ interfaceId: HOLDING_ID, viewStatus: OK, viewValue: VIEW }]);
    const r = evaluateSlot(rule, slot, contract, ctx);
    expect(r.errors).toEqual([]);
    expect(r.intents).toHaveLength(1);
  });

  it('a failed view of a contract is a rule error; a contract without the view does not match', () => {
    const failed = token([
      { interfaceId: HOLDING_ID, viewStatus: { code: 13, message: 'boom', details: [] } },
    ]);
    expect(evaluateSlot(rule, slot, failed, ctx).errors).toMatchObject([
      { code: 'INTERFACE_VIEW_FAILED', pos: { line: 26 } },
    ]);
    const other = token([
      { interfaceId: `${HOLDINGS.packageId}:Holdings.Api:Other`, viewStatus: OK, viewValue: {} },
    ]);
    expect(evaluateSlot(rule, slot, other, ctx).explanations[0]?.mismatch?.reason).toBe(
      'other-template',
    );
  });
});

describe('an interface rule loaded without packages', () => {
  it('is taken as a template, and the explanation says why it does not fire', () => {
    const text = `version: 1
rules:
  - id: big-holding
    on: { created: '#holdings:Holdings.Api:Holding', party: payer }
    then:
      - exercise: { interface: '#holdings:Holdings.Api:Holding', contractId: x, choice: Transfer }
        actAs: [payer]
`;
    const { ruleSet } = loadRules([{ path: 'r.yaml', text }], { parties: PARTIES });
    const event = token([{ interfaceId: HOLDING_ID, viewStatus: OK, viewValue: VIEW }]);
    const r = evaluate(ruleSet, input({ CreatedEvent: event }), CONTEXT, { explain: 'all' });
    expect(r.explanations[0]?.mismatch?.message).toContain(
      'Holdings.Api:Holding is an interface of this event, but the rules were loaded without the packages that say so',
    );
  });
});
