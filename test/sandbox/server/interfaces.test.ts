import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { specRoutes } from '../../support/spec-routes.js';
import { specValidator } from '../../support/spec-validator.js';
import {
  call,
  startTestSandbox,
  submitForTransaction,
  type WireEvent,
  type WireTransaction,
} from './sandbox-fixture.js';

// Interfaces on the wire: a model's interface with choices (assets), implemented by a template of
// its package and by one of another model (vouchers, loaded first on purpose).
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
const routes = specRoutes('openapi-3.5');
const asyncapi = specValidator('asyncapi-3.5');
const HOLDING = '#assets:Asset.Api:Holding';

let sb: Sandbox;
let alice: string;
let bob: string;
let holdingId = '';

beforeAll(async () => {
  sb = await startTestSandbox({
    models: [fixture('vouchers.model.yaml'), fixture('assets.model.yaml')],
  });
  alice = sb.parties.Alice!;
  bob = sb.parties.Bob!;
});

afterAll(async () => {
  await sb.stop();
});

const submit = (actAs: string, command: unknown) =>
  submitForTransaction(sb, {
    actAs,
    userId: actAs === alice ? 'alice-bot' : 'bob-bot',
    command,
    eventFormat: { filtersByParty: { [alice]: {}, [bob]: {} }, verbose: true },
    idPrefix: 'iface',
  });

async function createCash(amount = '10'): Promise<{ cid: string; offset: number }> {
  const r = await submit(alice, {
    CreateCommand: {
      templateId: '#assets:Asset.Cash:Cash',
      createArguments: { issuer: alice, owner: bob, amount },
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { cid: r.tx!.events[0]!.CreatedEvent!.contractId as string, offset: r.tx!.offset };
}

const holdingFilter = (party: string, includeInterfaceView: boolean) => ({
  filtersByParty: {
    [party]: {
      cumulative: [
        {
          identifierFilter: {
            InterfaceFilter: { value: { interfaceId: HOLDING, includeInterfaceView } },
          },
        },
      ],
    },
  },
  verbose: true,
});

async function updateAt(
  offset: number,
  eventFormat: unknown,
  shape: string,
): Promise<WireTransaction> {
  const body = {
    beginExclusive: offset - 1,
    endInclusive: offset,
    updateFormat: {
      includeTransactions: { eventFormat, transactionShape: `TRANSACTION_SHAPE_${shape}` },
    },
  };
  routes.assertRequest('POST', '/v2/updates', body);
  const r = await call(sb, 'POST', '/v2/updates', body);
  expect(r.status, r.text).toBe(200);
  const frames = r.body as { update: { Transaction: { value: WireTransaction } } }[];
  for (const f of frames) asyncapi.assert('JsGetUpdatesResponse', f);
  return frames[0]!.update.Transaction.value;
}

describe('interface filters', () => {
  it('give each implementing template’s view, of any package, only with includeInterfaceView', async () => {
    const cash = await createCash('10');
    const voucher = await submit(alice, {
      CreateCommand: {
        templateId: '#vouchers:Vouchers:Voucher',
        createArguments: { issuer: alice, holder: bob, value: '5' },
      },
    });
    expect(voucher.status).toBe(200);
    const withView = await updateAt(cash.offset, holdingFilter(bob, true), 'ACS_DELTA');
    const views = withView.events[0]!.CreatedEvent!.interfaceViews as Record<string, unknown>[];
    holdingId = views[0]!.interfaceId as string;
    expect(holdingId).toMatch(/^[0-9a-f]{64}:Asset.Api:Holding$/);
    // The view's trailing None (note) is left out, as in everything the server sends.
    expect(views).toEqual([
      {
        interfaceId: holdingId,
        viewStatus: { code: 0, message: '', details: [] },
        viewValue: { owner: bob, amount: '10.00' },
        implementationPackageId: (withView.events[0]!.CreatedEvent!.templateId as string).split(
          ':',
        )[0],
      },
    ]);
    const other = await updateAt(voucher.tx!.offset, holdingFilter(bob, true), 'LEDGER_EFFECTS');
    expect(
      (other.events[0]!.CreatedEvent!.interfaceViews as { viewValue: unknown }[])[0]!.viewValue,
    ).toEqual({ owner: bob, amount: '5.00', note: 'voucher' });
    const without = await updateAt(cash.offset, holdingFilter(bob, false), 'ACS_DELTA');
    expect(without.events[0]!.CreatedEvent!.interfaceViews).toEqual([]);
  });

  it('give views in active contracts too', async () => {
    await createCash('3');
    const end = await call(sb, 'GET', '/v2/state/ledger-end');
    const body = {
      activeAtOffset: (end.body as { offset: number }).offset,
      eventFormat: holdingFilter(bob, true),
    };
    routes.assertRequest('POST', '/v2/state/active-contracts', body);
    const r = await call(sb, 'POST', '/v2/state/active-contracts', body);
    routes.assertResponse('POST', '/v2/state/active-contracts', r.status, r.body);
    const events = (
      r.body as { contractEntry: { JsActiveContract: { createdEvent: WireEvent[string] } } }[]
    ).map((e) => e.contractEntry.JsActiveContract.createdEvent);
    const templates = new Set(
      events.map((e) => (e.templateId as string).split(':').slice(1).join(':')),
    );
    expect(templates).toEqual(new Set(['Asset.Cash:Cash', 'Vouchers:Voucher']));
    for (const e of events) {
      expect((e.interfaceViews as { viewStatus: { code: number } }[])[0]!.viewStatus.code).toBe(0);
    }
  });
});

describe('interface choices', () => {
  it('run the template’s implementation, with interfaceId on the exercise and the archive', async () => {
    const { cid } = await createCash('7');
    const r = await submit(bob, {
      ExerciseCommand: {
        templateId: HOLDING,
        contractId: cid,
        choice: 'Transfer',
        choiceArgument: { newOwner: alice },
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const exercised = r.tx!.events[0]!.ExercisedEvent!;
    expect(exercised).toMatchObject({
      choice: 'Transfer',
      interfaceId: holdingId,
      consuming: true,
      actingParties: [bob],
      choiceArgument: { newOwner: alice },
    });
    expect(exercised.templateId as string).toMatch(/:Asset.Cash:Cash$/);
    const moved = r.tx!.events[1]!.CreatedEvent!;
    expect(exercised.exerciseResult).toBe(moved.contractId);
    // ACS_DELTA: the archive lists the interfaces the filter asked views of.
    const delta = await updateAt(r.tx!.offset, holdingFilter(bob, true), 'ACS_DELTA');
    const archived = delta.events.find((e) => e.ArchivedEvent !== undefined)!.ArchivedEvent!;
    expect(archived.implementedInterfaces).toEqual([holdingId]);
    const plain = await updateAt(r.tx!.offset, holdingFilter(bob, false), 'ACS_DELTA');
    expect(plain.events.find((e) => e.ArchivedEvent)!.ArchivedEvent!.implementedInterfaces).toEqual(
      [],
    );
    // LEDGER_EFFECTS through the interface filter: the exercise carries them too.
    const effects = await updateAt(r.tx!.offset, holdingFilter(bob, true), 'LEDGER_EFFECTS');
    expect(effects.events[0]!.ExercisedEvent).toMatchObject({
      interfaceId: holdingId,
      implementedInterfaces: [holdingId],
    });
  });

  it('run another package’s implementation, and refuse one that is missing', async () => {
    const voucher = await submit(alice, {
      CreateCommand: {
        templateId: '#vouchers:Vouchers:Voucher',
        createArguments: { issuer: alice, holder: bob, value: '2.5' },
      },
    });
    const vcid = voucher.tx!.events[0]!.CreatedEvent!.contractId as string;
    const askDescribe = (contractId: string) =>
      submit(bob, {
        ExerciseCommand: {
          templateId: HOLDING,
          contractId,
          choice: 'Describe',
          choiceArgument: {},
        },
      });
    const ok = await askDescribe(vcid);
    expect(ok.tx!.events[0]!.ExercisedEvent).toMatchObject({
      consuming: false,
      exerciseResult: 'a voucher of 2.50',
      interfaceId: holdingId,
    });
    // A non-consuming exercise lists no implemented interfaces, even through an interface
    // filter that asks for views (Canton fills them only for consuming exercises).
    const effects = await updateAt(ok.tx!.offset, holdingFilter(bob, true), 'LEDGER_EFFECTS');
    expect(effects.events[0]!.ExercisedEvent).toMatchObject({
      consuming: false,
      interfaceId: holdingId,
      implementedInterfaces: [],
    });
    const { cid } = await createCash('1');
    const missing = await askDescribe(cid);
    expect(missing.body.code).toBe('DAML_INTERPRETATION_ERROR');
    expect(String(missing.body.cause)).toMatch(/no behaviour for choice Describe/);
  });

  it('type the argument by the interface’s choice; a template’s own choice is not one', async () => {
    const { cid } = await createCash('1');
    const exercise = (choice: string, choiceArgument: unknown) =>
      submit(bob, {
        ExerciseCommand: { templateId: HOLDING, contractId: cid, choice, choiceArgument },
      });
    const missing = await exercise('Transfer', {});
    expect([missing.status, missing.body.code]).toEqual([400, 'COMMAND_PREPROCESSING_FAILED']);
    const own = await exercise('Burn', {});
    expect([own.status, own.body.code]).toEqual([400, 'INVALID_ARGUMENT']);
    expect(String(own.body.cause)).toMatch(/Invalid template:.*:Asset.Api:Holding or choice:Burn/);
  });
});
