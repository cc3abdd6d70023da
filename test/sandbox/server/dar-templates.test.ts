import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { specRoutes } from '../../support/spec-routes.js';
import { syntheticDar } from '../../support/synthetic-dar.js';
import { call, startTestSandbox, submitForTransaction } from './sandbox-fixture.js';

// DAR templates no model describes: created, checked against the DAR's types, archived.
const routes = specRoutes('openapi-3.5');
const dar = syntheticDar();
const TOKEN = '#synthetic-assets:Synthetic.Assets:Token';
const NOTE = '#synthetic-assets:Synthetic.Assets:Note';
const ASSET = '#synthetic-api:Synthetic.Api:Asset';
let sb: Sandbox;
let alice: string;
let bob: string;

beforeAll(async () => {
  sb = await startTestSandbox({ dars: [dar.bytes], models: [] });
  alice = sb.parties.Alice!;
  bob = sb.parties.Bob!;
});

afterAll(async () => {
  await sb.stop();
});

const tokenArgs = (extra: Record<string, unknown> = {}) => ({
  issuer: alice,
  owner: bob,
  amount: '12.5',
  color: 'Green',
  shape: { tag: 'Circle', value: 2 },
  tags: ['a'],
  meta: { k: 'v' },
  note: null,
  pair: { first: '7', second: 'seven' },
  limits: [
    ['b', '2'],
    ['a', '1'],
  ],
  issued: '2025-01-27',
  flag: true,
  ...extra,
});

/** submit-and-wait-for-transaction (LEDGER_EFFECTS, wildcard for the given parties). */
const submit = (actAs: string, command: unknown, parties = [alice, bob]) =>
  submitForTransaction(sb, {
    actAs,
    userId: actAs === alice ? 'alice-bot' : 'bob-bot',
    command,
    eventFormat: { filtersByParty: Object.fromEntries(parties.map((p) => [p, {}])), verbose: true },
    idPrefix: 'dar',
  });

const create = (templateId: string, createArguments: unknown) => ({
  CreateCommand: { templateId, createArguments },
});

async function createToken(extra: Record<string, unknown> = {}): Promise<string> {
  const r = await submit(alice, create(TOKEN, tokenArgs(extra)));
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.events[0]!.CreatedEvent!.contractId as string;
}

describe('a DAR template without a model', () => {
  it('is created with its argument normalised as Canton does, trailing Nones left out', async () => {
    const r = await submit(alice, create(TOKEN, tokenArgs()));
    expect(r.status).toBe(200);
    const created = r.events[0]!.CreatedEvent!;
    expect(created.templateId).toBe(`${dar.main.packageId}:Synthetic.Assets:Token`);
    expect(created.packageName).toBe('synthetic-assets');
    expect(created.createArgument).toEqual({
      ...tokenArgs(),
      amount: '12.5000000000',
      shape: { tag: 'Circle', value: '2.0000000000' },
      // GenMap entries in key order.
      limits: [
        ['a', '1'],
        ['b', '2'],
      ],
      // `note` stays null (a field with a value follows it); `expires` too.
      expires: null,
    });
    // Its signatories are the argument's parties that authorized it; the others observe.
    expect([created.signatories, created.observers]).toEqual([[alice], [bob]]);
    expect(created.contractKey).toBeNull();
  });

  it('leaves out the trailing Nones of what it sends', async () => {
    const r = await submit(bob, create(NOTE, { owner: bob, text: 'hi' }));
    expect(r.events[0]!.CreatedEvent!.createArgument).toEqual({ owner: bob, text: 'hi' });
  });

  it('refuses a create none of whose parties authorizes it', async () => {
    const r = await submit(alice, create(NOTE, { owner: bob, text: 'hi' }));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'DAML_AUTHORIZATION_ERROR' });
    expect(String(r.body.cause)).toMatch(/has no model, so its signatories are the parties/);
  });

  it('checks the argument against the DAR’s types, with Canton’s errors', async () => {
    const cases: [Record<string, unknown>, number, string, RegExp][] = [
      [{ shape: { tag: 'Circle' } }, 400, 'INVALID_ARGUMENT', /must have 'tag' and 'value'/],
      [{ shape: { tag: 'Hexagon', value: {} } }, 400, 'INVALID_ARGUMENT', /variant tag: Hexagon/],
      [{ color: 'Purple' }, 500, 'LEDGER_API_INTERNAL_ERROR', /Unexpected case: Purple/],
      [{ pair: { first: 7, second: 'x' } }, 500, 'LEDGER_API_INTERNAL_ERROR', /ujson.Str/],
      [{ limits: [['a']] }, 500, 'LEDGER_API_INTERNAL_ERROR', /out of bounds/],
      [{ amount: '1.00000000001' }, 400, 'INVALID_ARGUMENT', /more than 10 decimal places/],
      [{ flag: undefined }, 400, 'COMMAND_PREPROCESSING_FAILED', /Missing non-optional fields/],
      [{ extra: 1 }, 400, 'INVALID_ARGUMENT', /Unexpected fields: extra/],
    ];
    for (const [extra, status, code, cause] of cases) {
      const args = JSON.parse(JSON.stringify(tokenArgs(extra))) as Record<string, unknown>;
      const r = await submit(alice, create(TOKEN, args));
      expect([r.status, r.body.code], JSON.stringify(extra)).toEqual([status, code]);
      expect(String(r.body.cause)).toMatch(cause);
    }
  });

  it('is archived by its signatories, and only by them', async () => {
    const cid = await createToken();
    const archive = {
      ExerciseCommand: {
        templateId: TOKEN,
        contractId: cid,
        choice: 'Archive',
        choiceArgument: {},
      },
    };
    const byBob = await submit(bob, archive);
    expect(byBob.body).toMatchObject({ code: 'DAML_AUTHORIZATION_ERROR' });
    const byAlice = await submit(alice, archive);
    expect(byAlice.status).toBe(200);
    expect(byAlice.events[0]!.ExercisedEvent).toMatchObject({
      choice: 'Archive',
      consuming: true,
      actingParties: [alice],
      interfaceId: null,
    });
  });

  it('checks the argument of the DAR’s other choices, then refuses to run them', async () => {
    const cid = await createToken();
    const transfer = (choiceArgument: unknown) => ({
      ExerciseCommand: {
        templateId: TOKEN,
        contractId: cid,
        choice: 'Token_Transfer',
        choiceArgument,
      },
    });
    const missing = await submit(bob, transfer({}));
    expect([missing.status, missing.body.code]).toEqual([400, 'COMMAND_PREPROCESSING_FAILED']);
    const run = await submit(bob, transfer({ newOwner: alice }));
    expect(run.body.code).toBe('DAML_INTERPRETATION_ERROR');
    expect(String(run.body.cause)).toMatch(
      /no behaviour for choice Token_Transfer of .*:Synthetic.Assets:Token: it runs no Daml code/,
    );
  });

  it('has no key the sandbox evaluates', async () => {
    const r = await submit(alice, {
      ExerciseByKeyCommand: {
        templateId: TOKEN,
        contractKey: { first: alice, second: bob },
        choice: 'Archive',
        choiceArgument: {},
      },
    });
    expect(r.status).toBe(400);
    expect(String(r.body.cause)).toMatch(/does not have a key the sandbox evaluates: no model/);
  });
});

describe('the interfaces of a DAR template without a model', () => {
  it('match interface filters, with a failed view (no model computes it)', async () => {
    const cid = await createToken({ tags: ['view'] });
    const end = await call(sb, 'GET', '/v2/state/ledger-end');
    const path = '/v2/state/active-contracts';
    const body = {
      activeAtOffset: (end.body as { offset: number }).offset,
      eventFormat: {
        filtersByParty: {
          [bob]: {
            cumulative: [
              {
                identifierFilter: {
                  InterfaceFilter: { value: { interfaceId: ASSET, includeInterfaceView: true } },
                },
              },
            ],
          },
        },
        verbose: true,
      },
    };
    routes.assertRequest('POST', path, body);
    const r = await call(sb, 'POST', path, body);
    routes.assertResponse('POST', path, r.status, r.body);
    const entry = (
      r.body as { contractEntry: { JsActiveContract: { createdEvent: Record<string, unknown> } } }[]
    )
      .map((e) => e.contractEntry.JsActiveContract.createdEvent)
      .find((e) => e.contractId === cid)!;
    const apiId = dar.packages[0]!.packageId;
    const views = entry.interfaceViews as Record<string, unknown>[];
    expect(views).toHaveLength(1);
    expect(views[0]).toMatchObject({
      interfaceId: `${apiId}:Synthetic.Api:Asset`,
      viewStatus: { code: 9, details: [] },
      viewValue: null,
      implementationPackageId: dar.main.packageId,
    });
    expect((views[0]!.viewStatus as { message: string }).message).toMatch(
      /computes no view of Synthetic.Api:Asset/,
    );
  });

  it('run Archive through the interface; its other choices are refused', async () => {
    const cid = await createToken();
    const via = (choice: string, choiceArgument: unknown, by = alice) =>
      submit(by, {
        ExerciseCommand: { templateId: ASSET, contractId: cid, choice, choiceArgument },
      });
    const transfer = await via('Asset_Transfer', { newOwner: alice }, bob);
    expect(transfer.body.code).toBe('DAML_INTERPRETATION_ERROR');
    expect(String(transfer.body.cause)).toMatch(/\(interface .*:Synthetic.Api:Asset\)/);
    // The argument is the interface choice's: checked before the contract is looked at.
    const bad = await via('Asset_Transfer', { newOwner: 5 }, bob);
    expect(bad.status).toBe(500);
    const archived = await via('Archive', {});
    expect(archived.status).toBe(200);
    expect(archived.events[0]!.ExercisedEvent).toMatchObject({
      choice: 'Archive',
      interfaceId: `${dar.packages[0]!.packageId}:Synthetic.Api:Asset`,
      templateId: `${dar.main.packageId}:Synthetic.Assets:Token`,
    });
  });
});
