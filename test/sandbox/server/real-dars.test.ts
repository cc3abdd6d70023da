import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/core/sha256-hex.js';
import { PackageCatalogue } from '../../../src/daml-lf/package-catalogue.js';
import type { PackageSignature } from '../../../src/daml-lf/package-signature.js';
import { readDar } from '../../../src/daml-lf/read-dar.js';
import type { DamlType } from '../../../src/sandbox/model/model-types.js';
import { ValueTypes } from '../../../src/sandbox/model/value-types.js';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { SHARED_DIR, skipWithoutShared } from '../../support/shared-files.js';
import { specRoutes } from '../../support/spec-routes.js';
import { call, nextCommandId, startTestSandbox } from './sandbox-fixture.js';

// The sandbox on the real DARs of ../shared: every package served as it is, every template
// created and archived, and Splice's Amulet seen through the token standard's Holding.
const DARS = [
  'all-kinds-of.dar',
  'DamlDefinitionsServiceMain.dar',
  'canton-builtin-admin-workflow-party-replication-alpha.dar',
  'splice-amulet-0.1.14.dar',
  'splice-api-token-holding-v1-1.0.0.dar',
];
const missing = DARS.filter((d) => skipWithoutShared(`daml-lf/dars/${d}`)).length > 0;
const paths = DARS.map((d) => `${SHARED_DIR}daml-lf/dars/${d}`);
const AMULET_MODEL = fileURLToPath(
  new URL('../fixtures/splice-amulet.model.yaml', import.meta.url),
);
const HOLDING = '#splice-api-token-holding-v1:Splice.Api.Token.HoldingV1:Holding';
const routes = specRoutes('openapi-3.5');

/** A value of `type` with every party `party`, every Optional None and every list empty. */
function sample(type: DamlType, party: string, depth = 0): unknown {
  switch (type.kind) {
    case 'Party':
      return party;
    case 'Text':
      return 'x';
    case 'Int64':
    case 'Numeric':
      return '1';
    case 'Bool':
      return true;
    case 'Date':
      return '2025-01-27';
    case 'Timestamp':
      return '2025-01-27T00:00:00Z';
    case 'Unit':
    case 'TextMap':
      return {};
    case 'ContractId':
      return `00${'ab'.repeat(33)}`;
    case 'Optional':
      return type.of.kind === 'Optional' ? [] : null;
    case 'List':
    case 'GenMap':
      return [];
    case 'Enum':
      return type.constructors[0];
    case 'Record':
      return Object.fromEntries(type.fields.map((f) => [f.name, sample(f.type, party, depth + 1)]));
    case 'Variant': {
      // Deep down, a constructor that does not nest further, so a recursive type ends.
      const flat = type.constructors.find((c) => !['Record', 'Variant'].includes(c.type.kind));
      const ctor = (depth > 8 ? flat : undefined) ?? type.constructors[0]!;
      return { tag: ctor.name, value: sample(ctor.type, party, depth + 1) };
    }
    case 'Unsupported':
      throw new Error(`no value of ${type.text}`);
  }
}

describe.skipIf(missing)('the sandbox on the real DARs', () => {
  let sb: Sandbox;
  let alice: string;
  let signatures: PackageSignature[];

  beforeAll(async () => {
    const read = new Map<string, PackageSignature>();
    for (const p of paths) {
      for (const pkg of (await readDar(readFileSync(p), { source: p })).packages) {
        read.set(pkg.packageId, pkg.signature);
      }
    }
    signatures = [...read.values()];
    sb = await startTestSandbox({ dars: paths, models: [AMULET_MODEL] });
    alice = sb.parties.Alice!;
  }, 60_000);

  afterAll(async () => {
    await sb?.stop();
  });

  async function submit(command: unknown, actAs = [alice]) {
    const path = '/v2/commands/submit-and-wait-for-transaction';
    const r = await call(sb, 'POST', path, {
      commands: {
        commands: [command],
        commandId: nextCommandId('real'),
        actAs,
        userId: 'alice-bot',
      },
    });
    routes.assertResponse('POST', path, r.status, r.body);
    return r;
  }

  it('serves every package of every DAR, each archive hashing to its id', async () => {
    const r = await call(sb, 'GET', '/v2/packages');
    routes.assertResponse('GET', '/v2/packages', r.status, r.body);
    const ids = (r.body as { packageIds: string[] }).packageIds;
    expect(new Set(ids)).toEqual(new Set(signatures.map((s) => s.packageId)));
    for (const id of ids) {
      const a = await fetch(`${sb.url}/v2/packages/${id}`);
      expect(a.headers.get('canton-package-hash')).toBe(id);
      expect(sha256Hex(new Uint8Array(await a.arrayBuffer()))).toBe(id);
    }
  });

  it('creates and archives a contract of every template, its argument checked by the DAR', async () => {
    const types = new ValueTypes(PackageCatalogue.create(signatures));
    let created = 0;
    for (const pkg of signatures) {
      for (const m of pkg.modules) {
        for (const t of m.templates) {
          const templateId = `${pkg.packageId}:${m.name}:${t.name}`;
          const argument = sample({ kind: 'Record', fields: types.fields(t.fields) }, alice);
          const r = await submit({ CreateCommand: { templateId, createArguments: argument } });
          if (!JSON.stringify(argument).includes(alice)) {
            // No party in it: nobody can be its signatory.
            expect((r.body as { code: string }).code, templateId).toBe('DAML_AUTHORIZATION_ERROR');
            continue;
          }
          expect(r.status, `${templateId}: ${r.text.slice(0, 300)}`).toBe(200);
          const event = (
            r.body as { transaction: { events: { CreatedEvent: { contractId: string } }[] } }
          ).transaction.events[0]!.CreatedEvent;
          const archived = await submit({
            ExerciseCommand: {
              templateId,
              contractId: event.contractId,
              choice: 'Archive',
              choiceArgument: {},
            },
          });
          expect(archived.status, `${templateId} Archive: ${archived.text.slice(0, 300)}`).toBe(
            200,
          );
          created++;
        }
      }
    }
    expect(created).toBeGreaterThan(20);
  }, 60_000);

  it('shows an Amulet through HoldingV1:Holding with the view the model gives it', async () => {
    const dso = sb.parties.Bob!;
    const r = await submit(
      {
        CreateCommand: {
          templateId: '#splice-amulet:Splice.Amulet:Amulet',
          createArguments: {
            dso,
            owner: alice,
            amount: {
              initialAmount: '25.5',
              createdAt: { number: '7' },
              ratePerRound: { rate: '0.001' },
            },
          },
        },
      },
      [alice, dso],
    );
    expect(r.status, r.text).toBe(200);
    const end = await call(sb, 'GET', '/v2/state/ledger-end');
    const body = {
      activeAtOffset: (end.body as { offset: number }).offset,
      eventFormat: {
        filtersByParty: {
          [alice]: {
            cumulative: [
              {
                identifierFilter: {
                  InterfaceFilter: { value: { interfaceId: HOLDING, includeInterfaceView: true } },
                },
              },
            ],
          },
        },
        verbose: true,
      },
    };
    routes.assertRequest('POST', '/v2/state/active-contracts', body);
    const acs = await call(sb, 'POST', '/v2/state/active-contracts', body);
    routes.assertResponse('POST', '/v2/state/active-contracts', acs.status, acs.body);
    const events = (
      acs.body as {
        contractEntry: {
          JsActiveContract: { createdEvent: { interfaceViews: Record<string, unknown>[] } };
        };
      }[]
    ).map((e) => e.contractEntry.JsActiveContract.createdEvent);
    expect(events).toHaveLength(1);
    const [view] = events[0]!.interfaceViews;
    expect(view!.interfaceId).toMatch(/^[0-9a-f]{64}:Splice.Api.Token.HoldingV1:Holding$/);
    expect(view!.implementationPackageId).toMatch(/^[0-9a-f]{64}$/);
    expect(view!.viewStatus).toEqual({ code: 0, message: '', details: [] });
    // `lock` is None before `meta`: it stays null.
    expect(view!.viewValue).toEqual({
      owner: alice,
      instrumentId: { admin: dso, id: 'Amulet' },
      amount: '25.5000000000',
      lock: null,
      meta: { values: { 'amulet-version': '0.1.14' } },
    });
  });
});
