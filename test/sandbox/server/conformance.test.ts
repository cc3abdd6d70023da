import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { ASYNCAPI_CHANNELS, OPENAPI_OPERATIONS } from '../../../src/sandbox/server/route-table.js';
import { specRoutes } from '../../support/spec-routes.js';
import { specValidator } from '../../support/spec-validator.js';
import {
  call,
  createInvoiceCommands,
  keylessCommands,
  nextCommandId,
  PKG,
  startTestSandbox,
  wildcard,
  wsCollect,
} from './sandbox-fixture.js';

const routes = specRoutes('openapi-3.5');
const asyncapi = specValidator('asyncapi-3.5');

let sb: Sandbox;
let invoiceCid = '';
let acceptUpdateId = '';
let acceptOffset = 0;

/** Calls an endpoint, checks the request against the spec and the answer against the operation. */
async function conform(
  method: string,
  path: string,
  body?: unknown,
  status = 200,
): Promise<unknown> {
  if (body !== undefined) routes.assertRequest(method, path, body);
  const r = await call(sb, method, path, body);
  expect(r.status, `${method} ${path}: ${r.text.slice(0, 400)}`).toBe(status);
  routes.assertResponse(method, path, r.status, r.body);
  return r.body;
}

const ledgerEffects = (party: string) => ({
  includeTransactions: {
    eventFormat: wildcard(party),
    transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS',
  },
});

beforeAll(async () => {
  sb = await startTestSandbox();
  const created = (await conform('POST', '/v2/commands/submit-and-wait-for-transaction', {
    commands: createInvoiceCommands(sb, 'INV-C1'),
  })) as { transaction: { events: { CreatedEvent: { contractId: string } }[] } };
  invoiceCid = created.transaction.events[0]!.CreatedEvent.contractId;
  const accepted = (await conform('POST', '/v2/commands/submit-and-wait', {
    commands: [
      {
        CreateAndExerciseCommand: {
          templateId: `${PKG}:Automation:InvoiceAcceptor`,
          createArguments: { payer: sb.parties.Bob },
          choice: 'AcceptInvoice',
          choiceArgument: { invoice: invoiceCid },
        },
      },
    ],
    commandId: nextCommandId('accept'),
    actAs: [sb.parties.Bob],
    userId: 'bob-bot',
  })) as { updateId: string; completionOffset: number };
  acceptUpdateId = accepted.updateId;
  acceptOffset = accepted.completionOffset;
});

afterAll(async () => {
  await sb.stop();
});

describe('the catalogue', () => {
  it('routes exactly the operations of the 3.5 OpenAPI spec', () => {
    const spec = routes.operations.map((o) => `${o.method} ${o.template}`).sort();
    expect([...OPENAPI_OPERATIONS].sort()).toEqual(spec);
  });

  it('serves the websocket channels of the 3.5 AsyncAPI', () => {
    const channels = Object.keys(asyncapi.spec.channels ?? {}).sort();
    expect([...ASYNCAPI_CHANNELS].sort()).toEqual(channels);
  });

  it('answers every operation with JSON (or Canton text/plain 400), never HTML, never a crash', async () => {
    const params: Record<string, string> = {
      party: sb.parties.Alice!,
      'user-id': 'alice-bot',
      'package-id': 'deadbeef',
      offset: '1',
      'update-id': 'nope',
      'idp-id': 'idp1',
    };
    const statuses = new Map<string, number>();
    for (const op of OPENAPI_OPERATIONS) {
      const [method, template] = op.split(' ') as [string, string];
      const path = template.replace(/\{([^}]+)\}/g, (_, n: string) =>
        encodeURIComponent(params[n]!),
      );
      const body = method === 'POST' || method === 'PATCH' ? {} : undefined;
      const r = await call(sb, method, path, body);
      statuses.set(op, r.status);
      expect(r.text.toLowerCase(), op).not.toContain('<html');
      expect(r.status, op).toBeLessThan(600);
      if (r.status === 200) {
        if (template === '/livez' || template === '/readyz') continue;
        routes.assertResponse(method, path, 200, r.body);
      } else if (r.contentType.startsWith('text/plain')) {
        expect(r.status, op).toBe(400);
        expect(r.text, op).toMatch(/^Invalid value/);
      } else {
        expect(r.contentType, op).toContain('application/json');
        routes.assertResponse(method, path, r.status, r.body);
      }
    }
    // The sandbox registers its packages at start, not over the API.
    expect(statuses.get('POST /v2/dars')).toBe(501);
    expect(statuses.get('POST /v2/packages')).toBe(501);
    expect(statuses.get('POST /v2/interactive-submission/prepare')).toBe(501);
    const dar = await call(sb, 'POST', '/v2/dars', {});
    expect((dar.body as { cause: string }).cause).toMatch(
      /sandbox does not support.*registers its packages at start/,
    );
    // An unknown package's archive: PACKAGE_NOT_FOUND (packages.test.ts has the rest).
    expect(statuses.get('GET /v2/packages/{package-id}')).toBe(404);
  });

  it("answers unknown paths with pekko's v1 404 body and wrong methods with tapir's 405", async () => {
    const unknown = await call(sb, 'GET', '/v2/nope');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({
      errors: [`HttpMethod(GET), uri: ${sb.url}/v2/nope`],
      status: 404,
      ledgerApiError: null,
    });
    const wrong = await call(sb, 'DELETE', '/v2/state/ledger-end');
    expect(wrong.status).toBe(405);
    expect(wrong.contentType).toMatch(/^text\/plain/);
    expect(wrong.text).toBe('Method Not Allowed');
  });

  it('answers malformed JSON with a Canton-style text/plain 400', async () => {
    const r = await call(sb, 'POST', '/v2/commands/async/submit', '{"commands": [');
    expect(r.status).toBe(400);
    expect(r.contentType).toMatch(/^text\/plain/);
    expect(r.text).toMatch(/^Invalid value for: body/);
  });
});

describe('implemented endpoints conform to the spec', () => {
  it('commands: async submit, submit-and-wait, submit-and-wait-for-transaction', async () => {
    expect(
      await conform('POST', '/v2/commands/async/submit', createInvoiceCommands(sb, 'INV-C2')),
    ).toEqual({});
    const w = (await conform(
      'POST',
      '/v2/commands/submit-and-wait',
      createInvoiceCommands(sb, 'INV-C3'),
    )) as {
      completionOffset: number;
    };
    expect(w.completionOffset).toBeGreaterThan(acceptOffset);
    const t = (await conform('POST', '/v2/commands/submit-and-wait-for-transaction', {
      commands: createInvoiceCommands(sb, 'INV-C4'),
      transactionFormat: {
        eventFormat: wildcard(sb.parties.Alice!),
        transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS',
      },
    })) as { transaction: { offset: number; events: unknown[] } };
    expect(t.transaction.events).toHaveLength(1);
  });

  it('sync errors are JsCantonErrors with the right status', async () => {
    const bad = createInvoiceCommands(sb, 'INV-C5');
    (
      bad.commands as { CreateCommand: { createArguments: { amount: string } } }[]
    )[0]!.CreateCommand.createArguments.amount = '-1.00';
    const r = await call(sb, 'POST', '/v2/commands/submit-and-wait', bad);
    expect(r.status).toBe(400);
    routes.assertResponse('POST', '/v2/commands/submit-and-wait', r.status, r.body);
    const gone = await call(sb, 'POST', '/v2/commands/async/submit', {
      commands: [
        {
          ExerciseCommand: {
            templateId: `${PKG}:Invoice:Invoice`,
            contractId: invoiceCid,
            choice: 'Cancel',
            choiceArgument: {},
          },
        },
      ],
      commandId: nextCommandId('gone'),
      actAs: [sb.parties.Alice],
      userId: 'alice-bot',
    });
    expect(gone.status).toBe(404);
    expect((gone.body as { code: string }).code).toBe('CONTRACT_NOT_FOUND');
    // An error that came through gRPC: the JSON layer prints the resource's case class.
    expect((gone.body as { resources: unknown }).resources).toEqual([
      ['ErrorResource(CONTRACT_ID)', invoiceCid],
    ]);
    routes.assertResponse('POST', '/v2/commands/async/submit', gone.status, gone.body);
  });

  it('completions lists, both endpoints, including a rejected completion', async () => {
    const dup = keylessCommands(sb);
    await conform('POST', '/v2/commands/submit-and-wait', dup);
    const again = await call(sb, 'POST', '/v2/commands/submit-and-wait', {
      ...dup,
      submissionId: 'second',
    });
    expect(again.status).toBe(409);
    const list = (await conform('POST', '/v2/commands/completions?limit=200', {
      userId: 'alice-bot',
      parties: [sb.parties.Alice],
      beginExclusive: 0,
    })) as { completionResponse: { Completion?: { value: { status: { code: number } } } } }[];
    expect(list.some((c) => c.completionResponse.Completion?.value.status.code === 6)).toBe(true);
    const v35 = (await conform('POST', '/v2/commands/command-completions', {
      parties: [sb.parties.Bob],
      beginExclusive: 0,
    })) as unknown[];
    expect(v35.length).toBeGreaterThan(0);
  });

  it('updates list, update-by-id/offset, transaction-by-id/offset, events-by-contract-id', async () => {
    const end = ((await conform('GET', '/v2/state/ledger-end')) as { offset: number }).offset;
    const updates = (await conform('POST', '/v2/updates?limit=50', {
      beginExclusive: 0,
      endInclusive: end,
      updateFormat: ledgerEffects(sb.parties.Bob!),
    })) as unknown[];
    expect(updates.length).toBeGreaterThan(0);
    const legacy = (await conform('POST', '/v2/updates', {
      beginExclusive: 0,
      endInclusive: end,
      filter: { filtersByParty: { [sb.parties.Alice!]: {} } },
      verbose: true,
    })) as unknown[];
    expect(legacy.length).toBeGreaterThan(0);
    await conform('POST', '/v2/updates/update-by-id', {
      updateId: acceptUpdateId,
      updateFormat: ledgerEffects(sb.parties.Bob!),
    });
    await conform('POST', '/v2/updates/update-by-offset', {
      offset: acceptOffset,
      updateFormat: ledgerEffects(sb.parties.Bob!),
    });
    await conform('POST', '/v2/updates/transaction-by-id', {
      updateId: acceptUpdateId,
      requestingParties: [sb.parties.Bob],
    });
    await conform('POST', '/v2/updates/transaction-by-offset', {
      offset: acceptOffset,
      requestingParties: [sb.parties.Bob],
    });
    await conform(
      'POST',
      '/v2/updates/update-by-id',
      { updateId: 'nope', updateFormat: ledgerEffects(sb.parties.Bob!) },
      404,
    );
    const events = (await conform('POST', '/v2/events/events-by-contract-id', {
      contractId: invoiceCid,
      eventFormat: wildcard(sb.parties.Alice!),
    })) as { created?: unknown; archived?: unknown };
    expect(events.created).toBeDefined();
    expect(events.archived).toBeDefined();
    await conform(
      'POST',
      '/v2/events/events-by-contract-id',
      { contractId: '00ff', eventFormat: wildcard(sb.parties.Alice!) },
      404,
    );
  });

  it('state: active contracts list and page, ledger end, pruned offsets, synchronizers', async () => {
    const end = ((await conform('GET', '/v2/state/ledger-end')) as { offset: number }).offset;
    const acs = (await conform('POST', '/v2/state/active-contracts', {
      activeAtOffset: end,
      eventFormat: wildcard(sb.parties.Alice!),
    })) as unknown[];
    expect(acs.length).toBeGreaterThan(1);
    const first = (await conform('POST', '/v2/state/active-contracts-page', {
      activeAtOffset: end,
      eventFormat: wildcard(sb.parties.Alice!),
      maxPageSize: 1,
    })) as { activeContracts: unknown[]; nextPageToken?: string };
    expect(first.activeContracts).toHaveLength(1);
    const second = (await conform('POST', '/v2/state/active-contracts-page', {
      activeAtOffset: end,
      eventFormat: wildcard(sb.parties.Alice!),
      maxPageSize: 1000,
      pageToken: first.nextPageToken,
    })) as { activeContracts: unknown[]; nextPageToken?: string | null };
    expect(second.activeContracts).toHaveLength(acs.length - 1);
    expect(second.nextPageToken).toBeNull();
    await conform('GET', '/v2/state/latest-pruned-offsets');
    const syncs = (await conform('GET', '/v2/state/connected-synchronizers')) as {
      connectedSynchronizers: unknown[];
    };
    expect(syncs.connectedSynchronizers).toHaveLength(1);
    await conform(
      'POST',
      '/v2/state/active-contracts',
      { activeAtOffset: end + 100, eventFormat: wildcard(sb.parties.Alice!) },
      400,
    );
  });

  it('parties, users, rights, packages, version, health', async () => {
    const pid = (await conform('GET', '/v2/parties/participant-id')) as { participantId: string };
    expect(pid.participantId).toBe(sb.participantId);
    const dave = (await conform('POST', '/v2/parties', {
      partyIdHint: 'Dave',
      identityProviderId: '',
    })) as {
      partyDetails: { party: string };
    };
    expect(dave.partyDetails.party).toMatch(/^Dave::1220/);
    await conform('GET', '/v2/parties');
    const got = (await conform(
      'GET',
      `/v2/parties/${encodeURIComponent(dave.partyDetails.party)}`,
    )) as { partyDetails: unknown[] };
    expect(got.partyDetails).toHaveLength(1);
    await conform('POST', '/v2/users', {
      user: {
        id: 'dave-bot',
        primaryParty: dave.partyDetails.party,
        isDeactivated: false,
        identityProviderId: '',
      },
      rights: [{ kind: { CanActAs: { value: { party: dave.partyDetails.party } } } }],
    });
    await conform(
      'POST',
      '/v2/users',
      { user: { id: 'dave-bot', isDeactivated: false }, rights: [] },
      409,
    );
    await conform('GET', '/v2/users');
    await conform('GET', '/v2/users/dave-bot');
    await conform('GET', '/v2/users/dave-bot/rights');
    await conform('POST', '/v2/users/dave-bot/rights', {
      userId: 'dave-bot',
      rights: [{ kind: { CanReadAs: { value: { party: sb.parties.Alice } } } }],
      identityProviderId: '',
    });
    await conform('PATCH', '/v2/users/dave-bot/rights', {
      userId: 'dave-bot',
      rights: [{ kind: { CanReadAs: { value: { party: sb.parties.Alice } } } }],
      identityProviderId: '',
    });
    await conform('DELETE', '/v2/users/dave-bot');
    await conform('GET', '/v2/users/dave-bot', undefined, 404);
    const pkgs = (await conform('GET', '/v2/packages')) as { packageIds: string[] };
    expect(pkgs.packageIds).toHaveLength(1);
    await conform('GET', '/v2/version');
    expect((await call(sb, 'GET', '/livez')).status).toBe(200);
    const ready = await call(sb, 'GET', '/readyz');
    expect(ready.text).toContain('readyz check passed');
  });
});

describe('websocket frames conform to the AsyncAPI spec', () => {
  it('updates: transactions, then a checkpoint on the quiet stream', async () => {
    const { frames } = await wsCollect(
      sb,
      '/v2/updates',
      { beginExclusive: 0, updateFormat: ledgerEffects(sb.parties.Bob!) },
      { until: (f) => 'OffsetCheckpoint' in (f as { update: object }).update },
    );
    for (const f of frames) asyncapi.assert('Either_JsCantonError_JsGetUpdatesResponse', f);
    expect(frames.length).toBeGreaterThan(1);
    expect(frames.some((f) => 'OffsetCheckpoint' in (f as { update: object }).update)).toBe(true);
  });

  it('completions (both channels) and active contracts', async () => {
    const c = await wsCollect(
      sb,
      '/v2/commands/completions',
      { userId: 'alice-bot', parties: [sb.parties.Alice], beginExclusive: 0 },
      { count: 3 },
    );
    for (const f of c.frames) asyncapi.assert('Either_JsCantonError_CompletionStreamResponse', f);
    const c35 = await wsCollect(
      sb,
      '/v2/commands/command-completions',
      { parties: [sb.parties.Alice], beginExclusive: 0 },
      { count: 2 },
    );
    for (const f of c35.frames) asyncapi.assert('Either_JsCantonError_CompletionStreamResponse', f);
    const end = ((await call(sb, 'GET', '/v2/state/ledger-end')).body as { offset: number }).offset;
    const acs = await wsCollect(sb, '/v2/state/active-contracts', {
      activeAtOffset: end,
      eventFormat: wildcard(sb.parties.Bob!),
    });
    expect(acs.closeCode).toBe(1000);
    expect(acs.frames.length).toBeGreaterThan(0);
    for (const f of acs.frames)
      asyncapi.assert('Either_JsCantonError_JsGetActiveContractsResponse', f);
  });

  it('error frames: one JsCantonError, then a normal close', async () => {
    const r = await wsCollect(sb, '/v2/updates', {
      beginExclusive: 10_000,
      updateFormat: ledgerEffects(sb.parties.Bob!),
    });
    expect(r.frames).toHaveLength(1);
    asyncapi.assert('Either_JsCantonError_JsGetUpdatesResponse', r.frames[0]);
    expect((r.frames[0] as { code: string }).code).toBe('OFFSET_AFTER_LEDGER_END');
    expect(r.closeCode).toBe(1000);
    const flats = await wsCollect(sb, '/v2/updates/flats', {
      beginExclusive: 0,
      updateFormat: ledgerEffects(sb.parties.Bob!),
    });
    expect((flats.frames[0] as { code: string }).code).toBe('UNSUPPORTED_OPERATION');
  });
});
