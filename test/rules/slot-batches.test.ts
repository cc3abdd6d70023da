import { describe, expect, it } from 'vitest';
import type { CreatedEvent } from '../../src/ledger/wire/wire-types.js';
import { commandIdFor } from '../../src/rules/command-id.js';
import type { CompiledRule } from '../../src/rules/compiled-rule.js';
import { evaluateSlot } from '../../src/rules/evaluate-slot.js';
import type { EvaluationResult } from '../../src/rules/evaluation-result.js';
import { formatExplanation } from '../../src/rules/format-explanation.js';
import { loadRules } from '../../src/rules/load-rules.js';
import { RULE_LIMITS } from '../../src/rules/rule-language.js';
import { groupKey, SlotEvaluation } from '../../src/rules/slot-evaluation.js';
import { CATALOGUE, HOLDING_ID, problemsOf, TOKEN_ID } from './interface-fixtures.js';
import { PARTIES } from './rule-fixtures.js';

// forEach.batch: `when` selects contracts one at a time, `then` fires once per batch of them
// with `contracts` in scope; the batch's trigger key is the slot and its first contract.

const SLOT = new Date('2025-03-03T06:00:00Z');
const CONTEXT = { parties: PARTIES, snapshotOffset: 41 };

function batchRule(batch: string, when = 'decimal(contract.view.amount) < decimal("10")'): string {
  return `version: 1
rules:
  - id: merge-small
    schedule: { cron: '0 6 * * *' }
    forEach:
      activeContracts: '#holdings:Holdings.Api:Holding'
      party: payer
      batch: ${batch}
    when: '${when}'
    then:
      - exercise:
          template: '#tokens:Token:Token'
          contractId: '\${{ contracts[0].contractId }}'
          choice: Burn
          choiceArgument: {}
        actAs: [payer]
        workflowId: 'merge-\${{ size(contracts) }}-\${{ string(sum(contracts.map(c, c.view.amount))) }}'
`;
}

function load(text: string): CompiledRule {
  const { ruleSet, problems } = loadRules([{ path: 'r.yaml', text }], {
    parties: PARTIES,
    packages: CATALOGUE,
  });
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length > 0) throw new Error(JSON.stringify(errors, null, 1));
  return ruleSet.rules[0]!;
}

/** A Token seen through the Holding interface, with its view. */
function holding(n: number, amount: string, extra: Partial<CreatedEvent> = {}): CreatedEvent {
  return {
    offset: 10 + n,
    nodeId: 0,
    contractId: `00${String(n).padStart(4, '0')}`,
    templateId: TOKEN_ID,
    packageName: 'tokens',
    contractKey: null,
    createArgument: { issuer: PARTIES.issuer, owner: PARTIES.payer, amount },
    createdEventBlob: '',
    interfaceViews: [
      {
        interfaceId: HOLDING_ID,
        viewStatus: { code: 0, message: '', details: [] },
        viewValue: { owner: PARTIES.payer, amount },
      },
    ],
    witnessParties: [PARTIES.payer],
    signatories: [PARTIES.issuer],
    observers: [PARTIES.payer],
    createdAt: '2025-03-01T00:00:00Z',
    representativePackageId: TOKEN_ID.split(':')[0]!,
    acsDelta: true,
    ...extra,
  };
}

/** Every contract through one SlotEvaluation, then its end: what each call returned. */
function run(rule: CompiledRule, contracts: readonly CreatedEvent[]): EvaluationResult[] {
  const evaluation = new SlotEvaluation(rule, SLOT, CONTEXT);
  return [...contracts.map((c) => evaluation.contract(c)), evaluation.end()];
}

const all = (results: readonly EvaluationResult[]) => ({
  intents: results.flatMap((r) => r.intents),
  explanations: results.flatMap((r) => r.explanations),
  errors: results.flatMap((r) => r.errors),
});

describe('forEach.batch', () => {
  it('fires once per batch of selected contracts, in order, as soon as a batch is full', () => {
    const rule = load(batchRule('{ size: 2 }'));
    const contracts = [
      holding(1, '1.5'),
      holding(2, '50.0'), // not selected: not small
      holding(3, '2.5'),
      holding(4, '3.0'),
      holding(5, '4.0'),
    ];
    const results = run(rule, contracts);
    // The first batch (1, 3) fires with contract 3; 4 and 5 make the second; the end has none.
    expect(results.map((r) => r.intents.length)).toEqual([0, 0, 1, 0, 1, 0]);
    const { intents, errors } = all(results);
    expect(errors).toEqual([]);
    expect(intents.map((i) => i.workflowId)).toEqual(['merge-2-4', 'merge-2-7']);
    expect(intents.map((i) => i.triggerKey)).toEqual([
      { kind: 'slot', slot: SLOT.getTime(), contractId: '000001' },
      { kind: 'slot', slot: SLOT.getTime(), contractId: '000004' },
    ]);
    expect(intents[0]!.command).toMatchObject({ ExerciseCommand: { contractId: '000001' } });
    expect(intents[0]!.offset).toBe(41);
    expect(intents[0]!.commandId).toBe(
      commandIdFor({
        ruleId: 'merge-small',
        revision: 1,
        actAs: [PARTIES.payer],
        triggerKey: intents[0]!.triggerKey,
        actionIndex: 0,
      }),
    );
  });

  it('fires the last, smaller batch at the end, unless it has fewer than min', () => {
    const three = [holding(1, '1'), holding(2, '2'), holding(3, '3')];
    const loose = all(run(load(batchRule('{ size: 2 }')), three));
    expect(loose.intents.map((i) => i.workflowId)).toEqual(['merge-2-3', 'merge-1-3']);

    const strict = all(run(load(batchRule('{ size: 2, min: 2 }')), three));
    expect(strict.intents.map((i) => i.workflowId)).toEqual(['merge-2-3']);
    const last = strict.explanations.at(-1)!;
    expect(last).toMatchObject({ fired: false, contractId: '000003', error: null });
    expect(last.batch).toEqual({ contractIds: ['000003'], min: 2 });
    expect(formatExplanation(last)).toEqual([
      'merge-small (r.yaml:3:5): not fired for a batch of 1 contract (000003): fewer than batch.min (2)',
    ]);
  });

  it('explains each contract (selected or not) and each batch', () => {
    const rule = load(batchRule('{ size: 100, min: 2 }'));
    const { explanations } = all(run(rule, [holding(1, '1'), holding(2, '99'), holding(3, '2')]));
    expect(explanations.flatMap(formatExplanation)).toEqual([
      'merge-small (r.yaml:3:5): selected for contract 000001 (into a batch)',
      '  when[0] decimal(contract.view.amount) < decimal("10") → true',
      'merge-small (r.yaml:3:5): not selected for contract 000002',
      '  when[0] decimal(contract.view.amount) < decimal("10") → false',
      'merge-small (r.yaml:3:5): selected for contract 000003 (into a batch)',
      '  when[0] decimal(contract.view.amount) < decimal("10") → true',
      'merge-small (r.yaml:3:5): fired for a batch of 2 contracts (000001, 000003) (1 command)',
    ]);
  });

  it('gives the same batches and commandIds when the same snapshot is read again', () => {
    const rule = load(batchRule('{ size: 3, min: 2 }'));
    const contracts = Array.from({ length: 10 }, (_, i) => holding(i, String(i % 4)));
    const ids = (rs: EvaluationResult[]) => all(rs).intents.map((i) => i.commandId);
    const first = ids(run(rule, contracts));
    expect(first).toHaveLength(3); // 10 selected: 3 + 3 + 3, and a last one below min
    expect(ids(run(rule, contracts))).toEqual(first);
    // Another slot: other ids.
    const other = new SlotEvaluation(rule, new Date('2025-03-04T06:00:00Z'), CONTEXT);
    const next = [...contracts.map((c) => other.contract(c)), other.end()];
    expect(ids(next).some((id) => first.includes(id))).toBe(false);
  });

  it('groups by groupBy: each group in its own batches, the open ones closed in the order they opened', () => {
    const rule = load(
      batchRule(
        `{ size: 2, min: 1, groupBy: 'contract.createArgument.issuer' }`,
        'decimal(contract.view.amount) < decimal("10")',
      ),
    );
    const by = (n: number, issuer: string, amount: string) =>
      holding(n, amount, {
        createArgument: { issuer, owner: PARTIES.payer, amount },
      });
    const results = run(rule, [
      by(1, 'A', '1'),
      by(2, 'B', '1'),
      by(3, 'B', '2'),
      by(4, 'A', '3'),
      by(5, 'B', '4'),
      by(6, 'A', '5'),
    ]);
    const { intents } = all(results);
    expect(intents.map((i) => i.triggerKey.kind === 'slot' && i.triggerKey.contractId)).toEqual([
      '000002', // B full at contract 3
      '000001', // A full at contract 4
      '000005', // at the end: B opened again before A
      '000006',
    ]);
    expect(intents.map((i) => i.workflowId)).toEqual([
      'merge-2-3',
      'merge-2-4',
      'merge-1-4',
      'merge-1-5',
    ]);
  });

  it('a contract whose groupBy fails is an error for it alone', () => {
    const rule = load(batchRule(`{ size: 5, groupBy: 'int(contract.view.amount)' }`));
    const { intents, errors } = all(run(rule, [holding(1, '1'), holding(2, '1.5')]));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      code: 'CEL_EVALUATION_ERROR',
      expression: 'int(contract.view.amount)',
      phase: 'when',
      pos: { line: 8, col: 35 },
    });
    expect(intents).toHaveLength(1);
  });

  it('explains a failed groupBy or view of a rule without when as a failure, not as always firing', () => {
    const text = batchRule(`{ size: 5, groupBy: 'int(contract.view.amount)' }`).replace(
      / {4}when: .*\n/,
      '',
    );
    const failedView = holding(2, '1', {
      interfaceViews: [
        { interfaceId: HOLDING_ID, viewStatus: { code: 9, message: 'boom', details: [] } },
      ],
    });
    const { explanations } = all(run(load(text), [holding(1, '1.5'), failedView]));
    expect(explanations.slice(0, 2).flatMap(formatExplanation)).toEqual([
      'merge-small (r.yaml:3:5): failed for contract 000001',
      `  error at r.yaml:8:35: ${explanations[0]!.error!.message}`,
      'merge-small (r.yaml:3:5): failed for contract 000002',
      `  error at r.yaml:5:5: ${explanations[1]!.error!.message}`,
    ]);
  });

  it('an error in then fails the batch, not the slot', () => {
    const text = batchRule('{ size: 2 }').replace(
      "'${{ contracts[0].contractId }}'",
      "'${{ contracts[5].contractId }}'",
    );
    const { intents, errors, explanations } = all(
      run(load(text), [holding(1, '1'), holding(2, '2'), holding(3, '3'), holding(4, '4')]),
    );
    expect(intents).toEqual([]);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ phase: 'then', actionIndex: 0 });
    expect(explanations.at(-1)!.batch?.contractIds).toEqual(['000003', '000004']);
  });

  it('holds at most BATCH_PENDING_MAX selected contracts: the group open longest fires early', () => {
    const rule = load(batchRule(`{ size: 1000, min: 1, groupBy: 'contract.contractId' }`, 'true'));
    const evaluation = new SlotEvaluation(rule, SLOT, CONTEXT);
    let fired = 0;
    const n = RULE_LIMITS.BATCH_PENDING_MAX + 3;
    for (let i = 0; i < n; i++) fired += evaluation.contract(holding(i, '1')).intents.length;
    // Every contract its own group: the first three closed early, in order.
    expect(fired).toBe(3);
    expect(evaluation.end().intents).toHaveLength(n - 3);
  });

  it('contracts of other templates, unseen views and disabled rules are never selected', () => {
    const rule = load(batchRule('{ size: 2 }'));
    const noView = holding(2, '1', { interfaceViews: [] });
    const { intents, explanations } = all(run(rule, [holding(1, '1'), noView, holding(3, '1')]));
    expect(intents).toHaveLength(1);
    expect(explanations.filter((e) => e.triggerMatched === false)).toHaveLength(1);
    const disabled = load(
      batchRule('{ size: 2 }').replace('    schedule:', '    enabled: false\n    schedule:'),
    );
    expect(all(run(disabled, [holding(1, '1'), holding(2, '1')])).intents).toEqual([]);
  });

  it('fills the Optional fields then reads through contracts that the view leaves out', () => {
    const text = batchRule('{ size: 5 }').replace(
      "workflowId: 'merge-",
      'workflowId: \'${{ contracts.all(c, c.view.note == null) ? "plain" : "noted" }}-',
    );
    const noted = holding(2, '1', {
      interfaceViews: [
        {
          interfaceId: HOLDING_ID,
          viewStatus: { code: 0, message: '', details: [] },
          viewValue: { owner: PARTIES.payer, amount: '1', note: 'x' },
        },
      ],
    });
    const plain = all(run(load(text), [holding(1, '1'), holding(3, '2')]));
    expect(plain.errors).toEqual([]);
    expect(plain.intents.map((i) => i.workflowId)).toEqual(['plain-2-3']);
    const mixed = all(run(load(text), [holding(1, '1'), noted]));
    expect(mixed.intents.map((i) => i.workflowId)).toEqual(['noted-2-2']);
  });

  it('evaluateSlot refuses a batch rule (a batch is more than one contract)', () => {
    expect(() => evaluateSlot(load(batchRule('{}')), SLOT, holding(1, '1'), CONTEXT)).toThrow(
      /SlotEvaluation/,
    );
  });

  it('groupKey tells types apart and ignores the order of fields', () => {
    expect(groupKey({ a: '1', b: 2n })).toBe(groupKey({ b: 2n, a: '1' }));
    expect(groupKey('1')).not.toBe(groupKey(1n));
    expect(groupKey([null, true])).toBe('[null,true]');
  });
});

describe('forEach.batch when loading', () => {
  const rule = (batch: string, then: string, when = 'true') =>
    problemsOf(`version: 1
rules:
  - id: r
    schedule: { cron: '0 6 * * *' }
    forEach: { activeContracts: '#holdings:Holdings.Api:Holding', party: payer, batch: ${batch} }
    when: '${when}'
    then:
      - exercise:
          interface: '#holdings:Holdings.Api:Holding'
          contractId: '${then}'
          choice: Transfer
          choiceArgument: { to: '\${{ parties.issuer }}', amount: '\${{ string(sum(contracts.map(c, c.view.amount))) }}' }
        actAs: [payer]
`);

  it('checks the fields read through contracts against the interface view', () => {
    expect(rule('{ size: 10 }', '${{ contracts[0].contractId }}')).toEqual([]);
    expect(rule('{ size: 10 }', '${{ contracts[0].view.amout }}')).toEqual([
      expect.stringMatching(/^UNKNOWN_FIELD 10:46 .*"amout".*did you mean "amount"/),
    ]);
    expect(
      rule(
        '{ size: 10 }',
        '${{ contracts.filter(c, c.view.amount < decimal("3"))[0].contractId }}',
      ),
    ).toEqual([expect.stringMatching(/^TYPE_MISMATCH 10:\d+ .*decimal\(/)]);
  });

  it('says where contract and contracts belong', () => {
    expect(rule('{ size: 10 }', '${{ contract.contractId }}')).toEqual([
      expect.stringMatching(
        /^CEL_COMPILE_ERROR .*Unknown variable: contract .*then` sees `contracts`/,
      ),
    ]);
    expect(rule('{ size: 10 }', '${{ contracts[0].contractId }}', 'size(contracts) > 1')).toEqual([
      expect.stringMatching(
        /^CEL_COMPILE_ERROR 6:.*Unknown variable: contracts .*only in the `then`/,
      ),
    ]);
  });

  it('refuses min above size, and a bad groupBy', () => {
    expect(rule('{ size: 2, min: 3 }', '${{ contracts[0].contractId }}')).toEqual([
      expect.stringMatching(/^BAD_VALUE 5:.*batch\.min \(3\) is larger than batch\.size \(2\)/),
    ]);
    expect(rule(`{ groupBy: 'contract.view.ownr' }`, '${{ contracts[0].contractId }}')).toEqual([
      expect.stringMatching(/^UNKNOWN_FIELD 5:.*"ownr".*did you mean "owner"/),
    ]);
    expect(rule('{ size: 1001 }', '${{ contracts[0].contractId }}')).toEqual([
      expect.stringMatching(/^SCHEMA 5:\d+ `size` must be <= 1000/),
    ]);
  });
});
