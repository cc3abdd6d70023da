import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerClient } from '../../../src/ledger/ledger-client.js';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { specRoutes } from '../../support/spec-routes.js';
import {
  call,
  createInvoiceCommands,
  invoiceArgs,
  nextCommandId,
  PKG,
  startTestSandbox,
  wildcard,
} from './sandbox-fixture.js';

const routes = specRoutes('openapi-3.5');

// The last page has `"nextPageToken": null`, as Canton prints an absent Option.
type Page = { activeContracts: unknown[]; activeAtOffset: number; nextPageToken: string | null };

let sb: Sandbox;

async function post(path: string, body: unknown, status = 200): Promise<unknown> {
  routes.assertRequest('POST', path, body);
  const r = await call(sb, 'POST', path, body);
  expect(r.status, `${path}: ${r.text.slice(0, 400)}`).toBe(status);
  routes.assertResponse('POST', path, r.status, r.body);
  return r.body;
}

async function submit(commands: Record<string, unknown>): Promise<{ transaction: unknown }> {
  return (await post('/v2/commands/submit-and-wait-for-transaction', { commands })) as {
    transaction: unknown;
  };
}

function createdIds(tx: unknown): string[] {
  const events = (tx as { events: { CreatedEvent?: { contractId: string } }[] }).events;
  return events.flatMap((e) => (e.CreatedEvent === undefined ? [] : [e.CreatedEvent.contractId]));
}

async function ledgerEnd(): Promise<number> {
  return ((await call(sb, 'GET', '/v2/state/ledger-end')).body as { offset: number }).offset;
}

function page(party: string, maxPageSize: number, pageToken?: string, activeAtOffset?: number) {
  return post('/v2/state/active-contracts-page', {
    eventFormat: wildcard(party),
    maxPageSize,
    ...(activeAtOffset === undefined ? {} : { activeAtOffset }),
    ...(pageToken === undefined ? {} : { pageToken }),
  }) as Promise<Page>;
}

async function allPages(party: string, size: number, offset: number): Promise<Page[]> {
  const pages: Page[] = [];
  let token: string | undefined;
  for (let i = 0; i < 100; i++) {
    const p = await page(party, size, token, i === 0 ? offset : undefined);
    pages.push(p);
    token = p.nextPageToken ?? undefined;
    if (token === undefined) return pages;
  }
  throw new Error('more than 100 pages');
}

function withoutToken(element: unknown): unknown {
  const { streamContinuationToken: _, ...rest } = element as Record<string, unknown>;
  return rest;
}

function invoice(reference: string): Record<string, unknown> {
  return {
    CreateCommand: {
      templateId: `${PKG}:Invoice:Invoice`,
      createArguments: invoiceArgs(sb, reference),
    },
  };
}

beforeAll(async () => {
  sb = await startTestSandbox();
  // Several creates per transaction, an archive, and a nested create under an exercise.
  const first = createdIds(
    (
      await submit({
        ...createInvoiceCommands(sb, 'P-1'),
        commands: [invoice('P-1'), invoice('P-2'), invoice('P-3')],
      })
    ).transaction,
  );
  await submit(createInvoiceCommands(sb, 'P-4'));
  await submit({
    commands: [
      {
        ExerciseCommand: {
          templateId: `${PKG}:Invoice:Invoice`,
          contractId: first[1],
          choice: 'Cancel',
          choiceArgument: {},
        },
      },
    ],
    commandId: nextCommandId('cancel'),
    actAs: [sb.parties.Alice],
    userId: 'alice-bot',
  });
  await submit({
    commands: [
      {
        CreateAndExerciseCommand: {
          templateId: `${PKG}:Automation:InvoiceAcceptor`,
          createArguments: { payer: sb.parties.Bob },
          choice: 'AcceptInvoice',
          choiceArgument: { invoice: first[0] },
        },
      },
    ],
    commandId: nextCommandId('accept'),
    actAs: [sb.parties.Bob],
    userId: 'bob-bot',
  });
  await submit({
    ...createInvoiceCommands(sb, 'P-5'),
    commands: [invoice('P-5'), invoice('P-6')],
  });
});

afterAll(async () => {
  await sb.stop();
});

describe('POST /v2/state/active-contracts-page', () => {
  it('pages through exactly the snapshot the list form returns, in its order', async () => {
    const end = await ledgerEnd();
    const list = (await post('/v2/state/active-contracts', {
      activeAtOffset: end,
      eventFormat: wildcard(sb.parties.Alice!),
    })) as unknown[];
    // P-3, P-4, the Payment, P-5, P-6
    expect(list).toHaveLength(5);
    for (const size of [1, 2, 3, 5, 6]) {
      const pages = await allPages(sb.parties.Alice!, size, end);
      expect(pages).toHaveLength(Math.ceil(list.length / size));
      // The same contracts; the list's elements carry their continuation token, a page's none.
      expect(pages.flatMap((p) => p.activeContracts)).toEqual(list.map(withoutToken));
      for (const p of pages) expect(p.activeAtOffset).toBe(end);
    }
  });

  it('keeps serving the snapshot of the first page while the ledger moves on', async () => {
    const end = await ledgerEnd();
    const list = (await post('/v2/state/active-contracts', {
      activeAtOffset: end,
      eventFormat: wildcard(sb.parties.Alice!),
    })) as unknown[];
    const first = await page(sb.parties.Alice!, 2, undefined, end);
    const later = createdIds((await submit(createInvoiceCommands(sb, 'P-7'))).transaction);
    await submit({
      commands: [
        {
          ExerciseCommand: {
            templateId: `${PKG}:Invoice:Invoice`,
            contractId: later[0],
            choice: 'Cancel',
            choiceArgument: {},
          },
        },
      ],
      commandId: nextCommandId('cancel'),
      actAs: [sb.parties.Alice],
      userId: 'alice-bot',
    });
    const lastOfList = (list.at(-1) as { contractEntry: unknown }).contractEntry as {
      JsActiveContract: { createdEvent: { contractId: string } };
    };
    await submit({
      commands: [
        {
          ExerciseCommand: {
            templateId: `${PKG}:Invoice:Invoice`,
            contractId: lastOfList.JsActiveContract.createdEvent.contractId,
            choice: 'Cancel',
            choiceArgument: {},
          },
        },
      ],
      commandId: nextCommandId('cancel'),
      actAs: [sb.parties.Alice],
      userId: 'alice-bot',
    });
    const rest: unknown[] = [];
    let token = first.nextPageToken ?? undefined;
    for (let i = 0; i < 10 && token !== undefined; i++) {
      const p = await page(sb.parties.Alice!, 2, token);
      expect(p.activeAtOffset).toBe(end);
      rest.push(...p.activeContracts);
      token = p.nextPageToken ?? undefined;
    }
    expect(token).toBeUndefined();
    expect([...first.activeContracts, ...rest]).toEqual(list.map(withoutToken));
  });

  it('rejects a token used with another event format or offset, and a malformed token', async () => {
    const end = await ledgerEnd();
    const first = await page(sb.parties.Alice!, 1, undefined, end);
    expect(first.nextPageToken).toEqual(expect.any(String));
    const token = first.nextPageToken!;
    const body = (party: string, extra: Record<string, unknown>) => ({
      eventFormat: wildcard(party),
      maxPageSize: 1,
      pageToken: token,
      ...extra,
    });
    for (const b of [
      body(sb.parties.Bob!, {}),
      body(sb.parties.Alice!, { activeAtOffset: end - 1 }),
      body(sb.parties.Alice!, { pageToken: 'bm90IGEgdG9rZW4' }),
    ]) {
      const r = await call(sb, 'POST', '/v2/state/active-contracts-page', b);
      expect(r.status).toBe(400);
      expect((r.body as { code: string }).code).toBe('INVALID_ARGUMENT');
    }
  });
});

describe('POST /v2/state/active-contracts: eventFormat XOR the legacy filter', () => {
  const cause = async (body: Record<string, unknown>): Promise<string> => {
    const r = await call(sb, 'POST', '/v2/state/active-contracts', body);
    expect(r.status).toBe(400);
    return (r.body as { cause: string }).cause;
  };

  it('refuses both, a format with verbose, and neither, in the words of event_format', async () => {
    const end = await ledgerEnd();
    const format = wildcard(sb.parties.Alice!);
    expect(await cause({ activeAtOffset: end, eventFormat: format, filter: format })).toMatch(
      /: Both event_format and filter are set\./,
    );
    expect(await cause({ activeAtOffset: end, eventFormat: format, verbose: true })).toMatch(
      /: Both event_format and verbose are set\./,
    );
    expect(await cause({ activeAtOffset: end })).toMatch(
      /: Either filter\/verbose or event_format is required\./,
    );
    const legacy = await call(sb, 'POST', '/v2/state/active-contracts', {
      activeAtOffset: end,
      filter: format,
    });
    expect(legacy.status).toBe(200);
  });
});

describe('POST /v2/state/active-contracts: the 3.5 stream continuation token', () => {
  it('gives each element the token that resumes after it, as Canton 3.5 does', async () => {
    const end = await ledgerEnd();
    const request = { activeAtOffset: end, eventFormat: wildcard(sb.parties.Alice!) };
    const all = (await post('/v2/state/active-contracts', request)) as {
      streamContinuationToken: string;
    }[];
    expect(all.length).toBeGreaterThan(2);
    for (const e of all) expect(e.streamContinuationToken).toMatch(/^[A-Za-z0-9+/=]+$/);
    // Resumed after the second: the last three, the same elements.
    const rest = await post('/v2/state/active-contracts', {
      ...request,
      streamContinuationToken: all[1]!.streamContinuationToken,
    });
    expect(rest).toEqual(all.slice(2));
    // A token of another snapshot, or one that is not a token, is refused.
    const other = await call(sb, 'POST', '/v2/state/active-contracts', {
      ...request,
      activeAtOffset: end - 1,
      streamContinuationToken: all[1]!.streamContinuationToken,
    });
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ code: 'INVALID_ARGUMENT' });
    const junk = await call(sb, 'POST', '/v2/state/active-contracts', {
      ...request,
      streamContinuationToken: 'not-a-token',
    });
    expect(junk.status).toBe(400);
  });

  it("lets the client's list mode page through a snapshot larger than a page", async () => {
    const client = await LedgerClient.create({ url: sb.url });
    try {
      const end = await ledgerEnd();
      const all = (await post('/v2/state/active-contracts', {
        activeAtOffset: end,
        eventFormat: wildcard(sb.parties.Alice!),
      })) as unknown[];
      const ids: string[] = [];
      for await (const e of client.activeContracts(
        { activeAtOffset: end, eventFormat: wildcard(sb.parties.Alice!) },
        { mode: 'list', pageSize: 1 },
      )) {
        const entry = e.contractEntry as {
          JsActiveContract: { createdEvent: { contractId: string } };
        };
        ids.push(entry.JsActiveContract.createdEvent.contractId);
      }
      expect(all.length).toBeGreaterThan(1);
      expect(ids).toHaveLength(all.length);
      expect(new Set(ids).size).toBe(all.length);
    } finally {
      await client.close();
    }
  });
});
