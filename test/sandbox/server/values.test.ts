import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/fake-clock.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { call, nextCommandId } from './sandbox-fixture.js';

const VALUES_MODEL = fileURLToPath(new URL('../fixtures/values.model.yaml', import.meta.url));
const SAMPLE = '#values:Values:Sample';

type ErrorBody = {
  code: string;
  cause: string;
  context: Record<string, string>;
  resources: [string, string][];
  errorCategory: number;
  grpcCodeValue: number;
  definiteAnswer: boolean | null;
};
type Created = { contractId: string; createArgument: unknown; createdAt: string };
type Exercised = { choiceArgument: unknown; exerciseResult: unknown };
type TxAnswer = {
  transaction: {
    effectiveAt: string;
    events: { CreatedEvent?: Created; ExercisedEvent?: Exercised }[];
  };
};

let sb: Sandbox;
let alice: string;

beforeAll(async () => {
  sb = await startSandbox({
    models: [VALUES_MODEL],
    parties: ['Alice'],
    users: ['alice-bot:Alice'],
    seed: 7,
    clock: new FakeClock(Date.UTC(2025, 0, 15, 12)),
  });
  alice = sb.parties.Alice!;
});

afterAll(async () => {
  await sb.stop();
});

function args(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    owner: alice,
    count: '7',
    level: 'High',
    at: '2025-01-27T15:30:37.500Z',
    day: '2025-01-27',
    amount: 12.5, // Numeric still takes numbers
    note: null,
    detail: { label: 'x' },
    counts: { a: null, b: '2' },
    maybe: [],
    flag: null,
    ...extra,
  };
}

function create(createArguments: unknown, extra: Record<string, unknown> = {}) {
  return {
    commands: [{ CreateCommand: { templateId: SAMPLE, createArguments } }],
    commandId: nextCommandId('values'),
    actAs: [alice],
    userId: 'alice-bot',
    ...extra,
  };
}

const LEDGER_EFFECTS = () => ({
  eventFormat: { filtersByParty: { [alice]: {} }, verbose: true },
  transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS',
});

async function submitForTx(commands: unknown, shape = LEDGER_EFFECTS()) {
  return call(sb, 'POST', '/v2/commands/submit-and-wait-for-transaction', {
    commands,
    transactionFormat: shape,
  });
}

async function createdSample(extra: Record<string, unknown> = {}): Promise<Created> {
  const r = await submitForTx(create(args(extra)));
  expect(r.status).toBe(200);
  return (r.body as TxAnswer).transaction.events[0]!.CreatedEvent!;
}

async function ledgerEnd(): Promise<number> {
  return ((await call(sb, 'GET', '/v2/state/ledger-end')).body as { offset: number }).offset;
}

describe('command values, as Canton 3.5 reads them', () => {
  it('an Int64 given as a JSON number is a 500 LEDGER_API_INTERNAL_ERROR (category 4, not redacted)', async () => {
    const before = await ledgerEnd();
    const r = await call(sb, 'POST', '/v2/commands/submit-and-wait', create(args({ count: 7 })));
    expect(r.status).toBe(500);
    const body = r.body as ErrorBody;
    expect(body.code).toBe('LEDGER_API_INTERNAL_ERROR');
    expect(body.errorCategory).toBe(4);
    expect(body.grpcCodeValue).toBe(13);
    expect(body.cause).toBe('Expected ujson.Str (data: 7)');
    expect(body.definiteAnswer).toBe(false);
    expect(body.context.definite_answer).toBe('false');
    expect(body.context.category).toBe('4');
    expect(body.resources).toEqual([]);
    expect(await ledgerEnd()).toBe(before);
  });

  it('the JSON layer reads the values before the command service validates the request', async () => {
    const { commandId: _omit, ...noCommandId } = create(args({ count: 7 }));
    const r = await call(sb, 'POST', '/v2/commands/async/submit', noCommandId);
    expect(r.status).toBe(500);
    expect((r.body as ErrorBody).code).toBe('LEDGER_API_INTERNAL_ERROR');
  });

  it.each([
    ['a number for a Party', { owner: 5 }],
    ['a string for a Bool', { flag: 'true' }],
    ['a Date given as a timestamp', { day: '2025-01-27T00:00:00Z' }],
    ['an unknown enum constructor', { level: 'Medium' }],
    ['a string for a record', { detail: 'x' }],
    ['a nested Optional given as null', { maybe: null }],
    ['an Int64 number inside a nested Optional', { maybe: [[5]] }],
  ])('%s is a 500 too', async (_what, extra) => {
    const r = await call(sb, 'POST', '/v2/commands/async/submit', create(args(extra)));
    expect(r.status).toBe(500);
    expect((r.body as ErrorBody).code).toBe('LEDGER_API_INTERNAL_ERROR');
    expect((r.body as ErrorBody).errorCategory).toBe(4);
  });

  it('a nested Optional field cannot be left out either', async () => {
    const { maybe: _omit, ...rest } = args();
    const r = await call(sb, 'POST', '/v2/commands/async/submit', create(rest));
    expect(r.status).toBe(500);
  });

  it('unexpected fields, missing fields and unparsable Int64 or Numeric stay 400', async () => {
    const unexpected = await call(
      sb,
      'POST',
      '/v2/commands/async/submit',
      create(args({ colour: 'red' })),
    );
    expect(unexpected.status).toBe(400);
    expect(unexpected.body).toMatchObject({
      code: 'INVALID_ARGUMENT',
      cause: 'The submitted request has invalid arguments: Unexpected fields: colour',
      errorCategory: 8,
    });
    const { count: _omit, ...noCount } = args();
    const missing = await call(sb, 'POST', '/v2/commands/async/submit', create(noCount));
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({
      code: 'COMMAND_PREPROCESSING_FAILED',
      cause: 'Missing non-optional fields: Set(count)',
      errorCategory: 8,
    });
    const word = await call(sb, 'POST', '/v2/commands/async/submit', create(args({ count: 'x' })));
    expect(word.status).toBe(400);
    expect((word.body as ErrorBody).code).toBe('INVALID_ARGUMENT');
    const numeric = await call(
      sb,
      'POST',
      '/v2/commands/async/submit',
      create(args({ amount: true })),
    );
    expect(numeric.status).toBe(400);
    expect((numeric.body as ErrorBody).code).toBe('INVALID_ARGUMENT');
    // A null-valued unknown field is ignored.
    const ignored = await call(
      sb,
      'POST',
      '/v2/commands/submit-and-wait',
      create(args({ colour: null })),
    );
    expect(ignored.status).toBe(200);
  });

  it('createArgument leaves out trailing Nones (recursively), keeps earlier ones as null, and prints Times like Canton', async () => {
    const c = await createdSample();
    expect(c.createArgument).toEqual({
      owner: alice,
      count: '7',
      level: 'High',
      at: '2025-01-27T15:30:37.5Z',
      day: '2025-01-27',
      amount: '12.50',
      note: null,
      detail: { label: 'x' },
      counts: { a: null, b: '2' },
      maybe: [],
    });
    // Top-level times are Instant.toString: no fraction when it is zero.
    expect(c.createdAt).toBe('2025-01-15T12:00:00Z');
    const t = await createdSample({ at: '2025-01-27T15:30:37.120Z', flag: true });
    expect(t.createArgument).toMatchObject({ at: '2025-01-27T15:30:37.12Z', flag: true });
    const z = await createdSample({ at: '2025-01-27T15:30:37.000000Z' });
    expect(z.createArgument).toMatchObject({ at: '2025-01-27T15:30:37Z' });
  });

  it('nested Optionals keep the array form on output', async () => {
    const someNone = await createdSample({ maybe: [[]] });
    expect((someNone.createArgument as { maybe: unknown }).maybe).toEqual([[]]);
    const someSome = await createdSample({ maybe: [['5']] });
    expect((someSome.createArgument as { maybe: unknown }).maybe).toEqual([['5']]);
  });

  it('choiceArgument and exerciseResult leave out trailing Nones; a choice argument Int64 number is a 500', async () => {
    const c = await createdSample();
    const exercise = (choiceArgument: unknown) => ({
      commands: [
        {
          ExerciseCommand: {
            templateId: SAMPLE,
            contractId: c.contractId,
            choice: 'Touch',
            choiceArgument,
          },
        },
      ],
      commandId: nextCommandId('touch'),
      actAs: [alice],
      userId: 'alice-bot',
    });
    const r = await submitForTx(exercise({ n: '1' }));
    expect(r.status).toBe(200);
    const ev = (r.body as TxAnswer).transaction.events[0]!.ExercisedEvent!;
    expect(ev.choiceArgument).toEqual({ first: null, n: '1' });
    expect(ev.exerciseResult).toEqual({ first: null, n: '1' });
    const bad = await call(sb, 'POST', '/v2/commands/async/submit', exercise({ n: 1 }));
    expect(bad.status).toBe(500);
    expect((bad.body as ErrorBody).code).toBe('LEDGER_API_INTERNAL_ERROR');
  });

  it('an unknown choice is INVALID_ARGUMENT from the JSON layer', async () => {
    const c = await createdSample();
    const r = await call(sb, 'POST', '/v2/commands/async/submit', {
      commands: [
        {
          ExerciseCommand: {
            templateId: SAMPLE,
            contractId: c.contractId,
            choice: 'Nope',
            choiceArgument: {},
          },
        },
      ],
      commandId: nextCommandId('nope'),
      actAs: [alice],
      userId: 'alice-bot',
    });
    expect(r.status).toBe(400);
    expect((r.body as ErrorBody).code).toBe('INVALID_ARGUMENT');
    expect((r.body as ErrorBody).cause).toMatch(
      /Invalid template:.*:Values:Sample or choice:Nope$/,
    );
  });
});
