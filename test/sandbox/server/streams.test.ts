import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
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

type Ev = Record<string, Record<string, unknown>>;
type Tx = { offset: number; updateId: string; events: Ev[] };
type UpdateFrame = {
  update: { Transaction?: { value: Tx }; OffsetCheckpoint?: { value: { offset: number } } };
};

const asyncapi = specValidator('asyncapi-3.5');
let sb: Sandbox;
let acceptOffset = 0;

const txFormat = (eventFormat: unknown, shape: 'ACS_DELTA' | 'LEDGER_EFFECTS') => ({
  includeTransactions: { eventFormat, transactionShape: `TRANSACTION_SHAPE_${shape}` },
});

async function ledgerEnd(): Promise<number> {
  return ((await call(sb, 'GET', '/v2/state/ledger-end')).body as { offset: number }).offset;
}

async function updatesAt(offset: number, updateFormat: unknown): Promise<Tx | undefined> {
  const r = await call(sb, 'POST', '/v2/updates', {
    beginExclusive: offset - 1,
    endInclusive: offset,
    updateFormat,
  });
  expect(r.status, r.text).toBe(200);
  const frames = r.body as UpdateFrame[];
  for (const f of frames) asyncapi.assert('JsGetUpdatesResponse', f);
  return frames[0]?.update.Transaction?.value;
}

const kinds = (tx: Tx | undefined) => (tx?.events ?? []).map((e) => Object.keys(e)[0]);

beforeAll(async () => {
  sb = await startTestSandbox();
  const created = await call(sb, 'POST', '/v2/commands/submit-and-wait-for-transaction', {
    commands: createInvoiceCommands(sb, 'S-1'),
  });
  const cid = (created.body as { transaction: Tx }).transaction.events[0]!.CreatedEvent!
    .contractId as string;
  const accepted = await call(sb, 'POST', '/v2/commands/submit-and-wait', {
    commands: [
      {
        CreateAndExerciseCommand: {
          templateId: `${PKG}:Automation:InvoiceAcceptor`,
          createArguments: { payer: sb.parties.Bob },
          choice: 'AcceptInvoice',
          choiceArgument: { invoice: cid },
        },
      },
    ],
    commandId: nextCommandId('accept'),
    actAs: [sb.parties.Bob],
    userId: 'bob-bot',
  });
  expect(accepted.status, accepted.text).toBe(200);
  acceptOffset = (accepted.body as { completionOffset: number }).completionOffset;
});

afterAll(async () => {
  await sb.stop();
});

describe('transaction shapes, witnesses and filters through the wire', () => {
  it('LEDGER_EFFECTS shows the exercise tree to the submitter; ACS_DELTA only creates and archives', async () => {
    const effects = await updatesAt(
      acceptOffset,
      txFormat(wildcard(sb.parties.Bob!), 'LEDGER_EFFECTS'),
    );
    expect(kinds(effects)).toEqual([
      'CreatedEvent',
      'ExercisedEvent',
      'ExercisedEvent',
      'CreatedEvent',
    ]);
    const root = effects!.events[1]!.ExercisedEvent!;
    expect(root.choice).toBe('AcceptInvoice');
    expect(root.lastDescendantNodeId).toBe(3);
    expect(effects!.events[2]!.ExercisedEvent!.consuming).toBe(true);
    const delta = await updatesAt(acceptOffset, txFormat(wildcard(sb.parties.Alice!), 'ACS_DELTA'));
    expect(kinds(delta)).toEqual(['ArchivedEvent', 'CreatedEvent']);
    for (const e of delta!.events) {
      const body = Object.values(e)[0]!;
      expect(body.witnessParties).toEqual([sb.parties.Alice]);
    }
  });

  it('a party that is no stakeholder or witness sees nothing', async () => {
    expect(
      await updatesAt(acceptOffset, txFormat(wildcard(sb.parties.Carol!), 'LEDGER_EFFECTS')),
    ).toBeUndefined();
  });

  it('template filters by #package-name and by package id; unknown templates are an error', async () => {
    const pkgs = (await call(sb, 'GET', '/v2/packages')).body as { packageIds: string[] };
    for (const ref of [PKG, pkgs.packageIds[0]!]) {
      const format = {
        filtersByParty: {
          [sb.parties.Alice!]: {
            cumulative: [
              {
                identifierFilter: {
                  TemplateFilter: {
                    value: { templateId: `${ref}:Payment:Payment`, includeCreatedEventBlob: true },
                  },
                },
              },
            ],
          },
        },
      };
      const tx = await updatesAt(acceptOffset, txFormat(format, 'ACS_DELTA'));
      expect(kinds(tx)).toEqual(['CreatedEvent']);
      expect(tx!.events[0]!.CreatedEvent!.templateId).toBe(
        `${pkgs.packageIds[0]!}:Payment:Payment`,
      );
      expect(tx!.events[0]!.CreatedEvent!.createdEventBlob).not.toBe('');
    }
    const unknown = await call(sb, 'POST', '/v2/updates', {
      beginExclusive: 0,
      endInclusive: acceptOffset,
      updateFormat: txFormat(
        {
          filtersByParty: {
            [sb.parties.Alice!]: {
              cumulative: [
                {
                  identifierFilter: {
                    TemplateFilter: { value: { templateId: `${PKG}:Nope:Nope` } },
                  },
                },
              ],
            },
          },
        },
        'ACS_DELTA',
      ),
    });
    expect(unknown.status).toBe(404);
    expect((unknown.body as { code: string }).code).toBe('TEMPLATES_OR_INTERFACES_NOT_FOUND');
  });

  it('interface filters with views', async () => {
    const r = await call(sb, 'POST', '/v2/state/active-contracts', {
      activeAtOffset: acceptOffset - 1,
      eventFormat: {
        filtersByParty: {
          [sb.parties.Bob!]: {
            cumulative: [
              {
                identifierFilter: {
                  InterfaceFilter: {
                    value: { interfaceId: `${PKG}:Payment:Payable`, includeInterfaceView: true },
                  },
                },
              },
            ],
          },
        },
      },
    });
    expect(r.status, r.text).toBe(200);
    const entries = r.body as {
      contractEntry: {
        JsActiveContract: { createdEvent: { interfaceViews: { viewValue: unknown }[] } };
      };
    }[];
    expect(entries).toHaveLength(1);
    expect(
      entries[0]!.contractEntry.JsActiveContract.createdEvent.interfaceViews[0]!.viewValue,
    ).toMatchObject({ payer: sb.parties.Bob, currency: 'USD' });
  });

  it('filtersForAnyParty sees every party', async () => {
    const tx = await updatesAt(acceptOffset, txFormat({ filtersForAnyParty: {} }, 'ACS_DELTA'));
    expect(kinds(tx)).toEqual(['ArchivedEvent', 'CreatedEvent']);
  });
});

describe('offsets and streams', () => {
  it('completions and transactions share offsets; a rejection takes an offset of its own', async () => {
    const before = await ledgerEnd();
    const ok = await call(sb, 'POST', '/v2/commands/submit-and-wait', keylessCommands(sb));
    expect((ok.body as { completionOffset: number }).completionOffset).toBe(before + 1);
    await call(sb, 'POST', '/sandbox/faults', {
      completionErrors: [{ code: 'MEDIATOR_SAYS_TX_TIMED_OUT', rate: 1 }],
    });
    await call(sb, 'POST', '/v2/commands/async/submit', keylessCommands(sb));
    await call(sb, 'DELETE', '/sandbox/faults');
    expect(await ledgerEnd()).toBe(before + 2);
    const tx = await updatesAt(before + 1, txFormat(wildcard(sb.parties.Alice!), 'ACS_DELTA'));
    expect(tx?.offset).toBe(before + 1);
    expect(
      await updatesAt(before + 2, txFormat(wildcard(sb.parties.Alice!), 'ACS_DELTA')),
    ).toBeUndefined();
  });

  it('tails live updates and sends a checkpoint to a quiet stream when the ledger moves', async () => {
    const begin = await ledgerEnd();
    const carol = wsCollect(
      sb,
      '/v2/updates',
      { beginExclusive: begin, updateFormat: txFormat(wildcard(sb.parties.Carol!), 'ACS_DELTA') },
      { count: 1 },
    );
    const alice = wsCollect(
      sb,
      '/v2/updates',
      { beginExclusive: begin, updateFormat: txFormat(wildcard(sb.parties.Alice!), 'ACS_DELTA') },
      { count: 1 },
    );
    await new Promise((r) => setTimeout(r, 50));
    await call(sb, 'POST', '/v2/commands/submit-and-wait', keylessCommands(sb));
    const a = (await alice).frames[0] as UpdateFrame;
    expect(a.update.Transaction?.value.offset).toBe(begin + 1);
    const c = (await carol).frames[0] as UpdateFrame;
    asyncapi.assert('Either_JsCantonError_JsGetUpdatesResponse', c);
    expect(c.update.OffsetCheckpoint?.value.offset).toBe(begin + 1);
  });

  it('accepts the 3.4 request shape (legacy filter, no beginExclusive) and enforces the XOR rules', async () => {
    const end = await ledgerEnd();
    const legacy = await call(sb, 'POST', '/v2/updates', {
      endInclusive: end,
      filter: { filtersByParty: { [sb.parties.Bob!]: {} } },
      verbose: false,
    });
    expect(legacy.status).toBe(200);
    expect((legacy.body as unknown[]).length).toBeGreaterThan(0);
    const both = await call(sb, 'POST', '/v2/updates', {
      beginExclusive: 0,
      endInclusive: end,
      filter: { filtersByParty: { [sb.parties.Bob!]: {} } },
      updateFormat: txFormat(wildcard(sb.parties.Bob!), 'ACS_DELTA'),
    });
    expect(both.status).toBe(400);
    expect((both.body as { cause: string }).cause).toMatch(/Both update_format and filter are set/);
    const neither = await call(sb, 'POST', '/v2/updates', { beginExclusive: 0, endInclusive: end });
    expect((neither.body as { cause: string }).cause).toMatch(
      /Either filter\/verbose or update_format is required/,
    );
    const verboseToo = await call(sb, 'POST', '/v2/updates', {
      beginExclusive: 0,
      endInclusive: end,
      verbose: true,
      updateFormat: txFormat(wildcard(sb.parties.Bob!), 'ACS_DELTA'),
    });
    expect(verboseToo.status).toBe(400);
  });

  it('rejects an end after the ledger end with OFFSET_AFTER_LEDGER_END', async () => {
    const r = await call(sb, 'POST', '/v2/updates', {
      beginExclusive: 0,
      endInclusive: (await ledgerEnd()) + 5,
      updateFormat: txFormat(wildcard(sb.parties.Bob!), 'ACS_DELTA'),
    });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      code: 'OFFSET_AFTER_LEDGER_END',
      errorCategory: 12,
      retryInfo: '1 second',
    });
  });

  it('list endpoints: limit, 413 beyond 200, idle cut-off on open-ended streams', async () => {
    const begin = await ledgerEnd();
    await Promise.all(
      Array.from({ length: 201 }, () =>
        call(sb, 'POST', '/v2/commands/async/submit', keylessCommands(sb)),
      ),
    );
    const format = txFormat(wildcard(sb.parties.Alice!), 'ACS_DELTA');
    const limited = await call(sb, 'POST', '/v2/updates?limit=5', {
      beginExclusive: begin,
      updateFormat: format,
    });
    expect(limited.body).toHaveLength(5);
    const max = await call(sb, 'POST', '/v2/updates?limit=200', {
      beginExclusive: begin,
      endInclusive: begin + 201,
      updateFormat: format,
    });
    expect(max.body).toHaveLength(200);
    const tooMany = await call(sb, 'POST', '/v2/updates', {
      beginExclusive: begin,
      endInclusive: begin + 201,
      updateFormat: format,
    });
    expect(tooMany.status).toBe(413);
    expect(tooMany.body).toMatchObject({
      code: 'JSON_API_MAXIMUM_LIST_ELEMENTS_NUMBER_REACHED',
      errorCategory: 2,
    });
    const started = Date.now();
    const tail = await call(sb, 'POST', '/v2/updates?stream_idle_timeout_ms=100', {
      beginExclusive: begin + 199,
      updateFormat: format,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(
      (tail.body as UpdateFrame[]).filter((f) => f.update.Transaction !== undefined),
    ).toHaveLength(2);
  });
});
