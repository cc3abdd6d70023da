import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/fake-clock.js';
import { SeededRandom } from '../../../src/core/seeded-random.js';
import type { ExerciseNode } from '../../../src/sandbox/engine/committed-transaction.js';
import { LedgerEngine } from '../../../src/sandbox/engine/ledger-engine.js';
import { loadModel } from '../../../src/sandbox/model/load-model.js';
import { ModelError } from '../../../src/sandbox/model/model-error.js';

// docs/sandbox-models.md: a choice `result:` is a value like `with:`: a CEL expression, or a
// YAML map of values (a record), or a constant.
const MODEL = `package:
  name: escrow
  version: 1.0.0
templates:
  Escrow:Escrow:
    fields: { buyer: Party, seller: Party, amount: Numeric 2 }
    signatories: [buyer]
    observers: [seller]
    choices:
      Release:
        controllers: [buyer]
        body:
          - create: Escrow:Payment
            as: payment
            with: { payer: this.buyer, payee: this.seller, amount: this.amount }
        result:
          payment: payment
          amount: decimal(this.amount) * 2
          note: '"released"'
          final: true
        returns: { payment: ContractId Escrow:Payment, amount: Numeric 2, note: Text, final: Bool }
      Peek:
        controllers: [buyer]
        consuming: false
        result: { amount: this.amount, nested: { seller: this.seller } }
  Escrow:Payment:
    fields: { payer: Party, payee: Party, amount: Numeric 2 }
    signatories: [payer]
    observers: [payee]
`;

function engineWith(text: string): { engine: LedgerEngine; buyer: string; seller: string } {
  const model = loadModel(text, 'escrow.yaml');
  const engine = LedgerEngine.create({
    models: [model],
    participantId: 'sandbox::1220' + 'ab'.repeat(32),
    random: new SeededRandom(1),
    clock: new FakeClock(Date.UTC(2025, 0, 15, 12)),
  });
  const party = (hint: string): string => {
    const r = engine.allocateParty(hint);
    if (!r.ok) throw new Error(r.error.cause);
    return r.value.party;
  };
  return { engine, buyer: party('Buyer'), seller: party('Seller') };
}

function exercise(
  l: ReturnType<typeof engineWith>,
  choice: string,
): { result: unknown; created: string[] } {
  const submit = (cmd: Record<string, unknown>, id: string): ReturnType<LedgerEngine['submit']> =>
    l.engine.submit(
      { commands: [cmd], commandId: id, actAs: [l.buyer], userId: 'tester' } as never,
      { userId: 'tester' },
    );
  const created = submit(
    {
      CreateCommand: {
        templateId: '#escrow:Escrow:Escrow',
        createArguments: { buyer: l.buyer, seller: l.seller, amount: '10.5' },
      },
    },
    `create-${choice}`,
  );
  if (!created.ok) throw new Error(created.error.cause);
  const cid = created.transaction.nodes[0]!.contract.contractId;
  const r = submit(
    {
      ExerciseCommand: {
        templateId: '#escrow:Escrow:Escrow',
        contractId: cid,
        choice,
        choiceArgument: {},
      },
    },
    `exercise-${choice}`,
  );
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.cause}`);
  const nodes = r.transaction.nodes;
  return {
    result: (nodes[0] as ExerciseNode).exerciseResult,
    created: nodes.filter((n) => n.kind === 'create').map((n) => n.contract.contractId),
  };
}

describe('a choice result written as a YAML map', () => {
  it('loads and evaluates each field like `with:`, normalised by `returns`', () => {
    const l = engineWith(MODEL);
    const { result, created } = exercise(l, 'Release');
    expect(created).toHaveLength(1);
    expect(result).toEqual({
      payment: created[0],
      amount: '21.00',
      note: 'released',
      final: true,
    });
  });

  it('works without `returns` and nests records', () => {
    const l = engineWith(MODEL);
    expect(exercise(l, 'Peek').result).toEqual({
      amount: '10.50',
      nested: { seller: l.seller },
    });
  });

  it('reports a bad field of the map at its line and column', () => {
    const bad = MODEL.replace('note: \'"released"\'', 'note: nope.size(');
    let error: unknown;
    try {
      loadModel(bad, 'escrow.yaml');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ModelError);
    const line = bad.split('\n').findIndex((l) => l.includes('note: nope.size(')) + 1;
    expect((error as ModelError).line).toBe(line);
  });
});
