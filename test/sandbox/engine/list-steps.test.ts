import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/fake-clock.js';
import { SeededRandom } from '../../../src/core/seeded-random.js';
import type { JsCommands } from '../../../src/ledger/wire/wire-types.js';
import type {
  CommittedTransaction,
  ExerciseNode,
} from '../../../src/sandbox/engine/committed-transaction.js';
import type { SubmitOutcome } from '../../../src/sandbox/engine/engine-types.js';
import { LedgerEngine } from '../../../src/sandbox/engine/ledger-engine.js';
import { loadModel } from '../../../src/sandbox/model/load-model.js';

// Model steps whose `fetch:` or `on:` gives a list of contract ids: the step runs on each, in
// order, and `as` names the list of arguments (fetch) or of results (exercise). With `sum()`, a
// choice merges coins into one, as the token-transfers example's Merge does.

const MODEL = loadModel(
  `package: { name: coins, version: 1.0.0 }
templates:
  Coins:Coin:
    fields: { owner: Party, amount: Numeric 2 }
    signatories: [owner]
    choices:
      Merge:
        controllers: [owner]
        argument: { others: List (ContractId Coins:Coin) }
        body:
          - fetch: arg.others
            template: Coins:Coin
            as: coins
          - exercise: Archive
            on: arg.others
            template: Coins:Coin
            as: archived
          - create: Coins:Coin
            with: { owner: this.owner, amount: 'decimal(this.amount) + sum(coins.map(c, c.amount))' }
            as: merged
        result: { merged: merged, archived: 'size(archived)' }
      Split:
        controllers: [owner]
        consuming: false
        argument: { into: List (ContractId Coins:Coin) }
        body:
          - exercise: Halve
            on: arg.into
            template: Coins:Coin
            argument: { by: this.owner }
            as: halves
        result: halves
      Halve:
        controllers: [owner]
        argument: { by: Party }
        body:
          - create: Coins:Coin
            with: { owner: this.owner, amount: 'decimal(this.amount) / 2' }
            as: half
        result: half
      Peek:
        controllers: [owner]
        consuming: false
        argument: { one: ContractId Coins:Coin }
        body:
          - fetch: arg.one
            template: Coins:Coin
            as: coin
        result: coin.amount
`,
  'coins.yaml',
);

function ledger() {
  const engine = LedgerEngine.create({
    models: [MODEL],
    participantId: 'sandbox::1220' + 'ab'.repeat(32),
    random: new SeededRandom(3),
    clock: new FakeClock(Date.UTC(2025, 0, 15, 12)),
  });
  const r = engine.allocateParty('Owner');
  if (!r.ok) throw new Error(r.error.cause);
  const owner = r.value.party;
  let n = 0;
  const submit = (cmds: JsCommands['commands']): SubmitOutcome =>
    engine.submit(
      { commands: cmds, commandId: `c-${n++}`, actAs: [owner], userId: 't' },
      { userId: 't' },
    );
  const committed = (r: SubmitOutcome): CommittedTransaction => {
    if (!r.ok) throw new Error(`${r.error.code}: ${r.error.cause}`);
    return r.transaction;
  };
  const coin = (amount: string): string =>
    committed(
      submit([
        { CreateCommand: { templateId: '#coins:Coins:Coin', createArguments: { owner, amount } } },
      ]),
    ).nodes[0]!.contract.contractId;
  const exercise = (contractId: string, choice: string, choiceArgument: unknown): SubmitOutcome =>
    submit([
      { ExerciseCommand: { templateId: '#coins:Coins:Coin', contractId, choice, choiceArgument } },
    ]);
  return { engine, owner, coin, exercise, committed };
}

describe('model steps over a list of contract ids', () => {
  it('fetch and exercise run on each id in order; as names the lists; sum totals the amounts', () => {
    const l = ledger();
    const [a, b, c] = [l.coin('1.50'), l.coin('2.25'), l.coin('0.25')];
    const tx = l.committed(l.exercise(a, 'Merge', { others: [b, c] }));
    // Merge on a, then Archive of b and of c (pre-order), then the merged coin.
    expect(tx.nodes.map((n) => (n.kind === 'create' ? 'create' : n.choice))).toEqual([
      'Merge',
      'Archive',
      'Archive',
      'create',
    ]);
    expect((tx.nodes[1] as ExerciseNode).contract.contractId).toBe(b);
    expect((tx.nodes[2] as ExerciseNode).contract.contractId).toBe(c);
    const merged = tx.nodes[3]!;
    expect(merged.kind === 'create' && merged.contract.argument).toEqual({
      owner: l.owner,
      amount: '4.00',
    });
    expect((tx.nodes[0] as ExerciseNode).exerciseResult).toEqual({
      merged: merged.contract.contractId,
      archived: '2',
    });
    const peek = l.exercise(merged.contract.contractId, 'Peek', { one: b });
    expect(peek.ok === false && peek.error.code).toBe('CONTRACT_NOT_FOUND');
  });

  it('an exercise over a list gives the list of results; an empty list does nothing', () => {
    const l = ledger();
    const [a, b, c] = [l.coin('1.00'), l.coin('3.00'), l.coin('5.00')];
    const tx = l.committed(l.exercise(a, 'Split', { into: [b, c] }));
    const halves = (tx.nodes[0] as ExerciseNode).exerciseResult as string[];
    expect(halves).toHaveLength(2);
    const created = tx.nodes.filter((n) => n.kind === 'create').map((n) => n.contract);
    expect(created.map((x) => x.contractId)).toEqual(halves);
    expect(created.map((x) => x.argument.amount)).toEqual(['1.50', '2.50']);
    const none = l.committed(l.exercise(a, 'Merge', { others: [] }));
    expect(none.nodes.filter((n) => n.kind === 'create')[0]!.contract.argument.amount).toBe('1.00');
  });

  it('a single id still gives one value, not a list', () => {
    const l = ledger();
    const [a, b] = [l.coin('1.00'), l.coin('7.00')];
    const tx = l.committed(l.exercise(a, 'Peek', { one: b }));
    expect((tx.nodes[0] as ExerciseNode).exerciseResult).toBe('7.00');
  });

  it('an id of the list that is not active fails the whole command, as in Daml', () => {
    const l = ledger();
    const [a, b] = [l.coin('1.00'), l.coin('2.00')];
    l.committed(l.exercise(b, 'Archive', {}));
    const r = l.exercise(a, 'Merge', { others: [b] });
    expect(r.ok === false && r.error.code).toBe('CONTRACT_NOT_FOUND');
    // Twice the same id: the second archive finds it consumed.
    const c = l.coin('3.00');
    const twice = l.exercise(a, 'Merge', { others: [c, c] });
    expect(twice.ok === false && twice.error.code).toBe('CONTRACT_NOT_FOUND');
    // All or nothing: c is still active.
    expect(l.exercise(a, 'Peek', { one: c }).ok).toBe(true);
  });
});
