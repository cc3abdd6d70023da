import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { specRoutes } from '../../support/spec-routes.js';
import { syntheticDar } from '../../support/synthetic-dar.js';
import { call, startTestSandbox, submitForTransaction } from './sandbox-fixture.js';

// A DAR's package given behaviour by a model of the same name and version.
const MODEL = fileURLToPath(new URL('../fixtures/synthetic-assets.model.yaml', import.meta.url));
const routes = specRoutes('openapi-3.5');
const dar = syntheticDar();
const TOKEN = '#synthetic-assets:Synthetic.Assets:Token';
const ASSET = '#synthetic-api:Synthetic.Api:Asset';
let sb: Sandbox;
let alice: string;
let bob: string;

beforeAll(async () => {
  sb = await startTestSandbox({ dars: [dar.bytes], models: [MODEL] });
  alice = sb.parties.Alice!;
  bob = sb.parties.Bob!;
});

afterAll(async () => {
  await sb.stop();
});

/** submit-and-wait-for-transaction; Bob reads through the DAR's interface, with its view. */
const submit = (actAs: string, command: unknown) =>
  submitForTransaction(sb, {
    actAs,
    userId: actAs === alice ? 'alice-bot' : 'bob-bot',
    command,
    eventFormat: {
      filtersByParty: {
        [bob]: {
          cumulative: [
            {
              identifierFilter: {
                InterfaceFilter: { value: { interfaceId: ASSET, includeInterfaceView: true } },
              },
            },
            { identifierFilter: { WildcardFilter: { value: {} } } },
          ],
        },
      },
      verbose: true,
    },
    idPrefix: 'darmodel',
  });

const token = (extra: Record<string, unknown> = {}) => ({
  CreateCommand: {
    templateId: TOKEN,
    createArguments: {
      issuer: alice,
      owner: bob,
      amount: '4',
      color: 'Blue',
      shape: { tag: 'Square', value: '3' },
      tags: [],
      meta: {},
      note: null,
      pair: { first: '1', second: 'one' },
      expires: null,
      limits: [],
      issued: '2025-01-27',
      flag: false,
      ...extra,
    },
  },
});

describe('a DAR package described by a model', () => {
  it('serves the DAR’s archives only: the model adds no package of its own', async () => {
    const r = await call(sb, 'GET', '/v2/packages');
    routes.assertResponse('GET', '/v2/packages', r.status, r.body);
    expect((r.body as { packageIds: string[] }).packageIds.sort()).toEqual(
      dar.packages.map((p) => p.packageId).sort(),
    );
  });

  it('creates with the model’s signatories and ensure, and computes the interface view', async () => {
    const r = await submit(alice, token());
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const created = r.events[0]!.CreatedEvent!;
    expect(created.templateId).toBe(`${dar.main.packageId}:Synthetic.Assets:Token`);
    expect([created.signatories, created.observers]).toEqual([[alice], [bob]]);
    // The view's trailing None (label) is left out.
    expect(created.interfaceViews).toEqual([
      {
        interfaceId: `${dar.packages[0]!.packageId}:Synthetic.Api:Asset`,
        viewStatus: { code: 0, message: '', details: [] },
        viewValue: { owner: bob, amount: '4.0000000000' },
        implementationPackageId: dar.main.packageId,
      },
    ]);
    const refused = await submit(alice, token({ amount: '0' }));
    expect(refused.body.code).toBe('DAML_INTERPRETATION_ERROR');
    expect(String(refused.body.cause)).toMatch(/template precondition violated/);
  });

  it('runs the choices the model implements, typed as the DAR says; refuses the others', async () => {
    const created = await submit(alice, token());
    const cid = created.events[0]!.CreatedEvent!.contractId as string;
    const peek = await submit(bob, {
      ExerciseCommand: {
        templateId: TOKEN,
        contractId: cid,
        choice: 'Token_Peek',
        choiceArgument: {},
      },
    });
    expect(peek.events[0]!.ExercisedEvent).toMatchObject({
      consuming: false,
      exerciseResult: '4.0000000000',
    });
    const transfer = await submit(bob, {
      ExerciseCommand: {
        templateId: ASSET,
        contractId: cid,
        choice: 'Asset_Transfer',
        choiceArgument: { newOwner: alice },
      },
    });
    expect(transfer.status, JSON.stringify(transfer.body)).toBe(200);
    const moved = transfer.events.find((e) => e.CreatedEvent)!.CreatedEvent!;
    expect(transfer.events[0]!.ExercisedEvent).toMatchObject({
      choice: 'Asset_Transfer',
      interfaceId: `${dar.packages[0]!.packageId}:Synthetic.Api:Asset`,
      exerciseResult: moved.contractId,
    });
    expect((moved.createArgument as { owner: string }).owner).toBe(alice);
    const notModelled = await submit(alice, {
      ExerciseCommand: {
        templateId: TOKEN,
        contractId: moved.contractId,
        choice: 'Token_Split',
        choiceArgument: { splitAmount: '1' },
      },
    });
    expect(notModelled.body.code).toBe('DAML_INTERPRETATION_ERROR');
  });
});
