import { describe, expect, it } from 'vitest';
import {
  readActiveContracts,
  type ActiveContractsSources,
} from '../../src/ledger/active-contracts.js';
import { eventFormat } from '../../src/ledger/filters.js';
import type {
  GetActiveContractsPageRequest,
  JsGetActiveContractsResponse,
} from '../../src/ledger/wire/wire-types.js';
import { specRoutes } from '../support/spec-routes.js';
import { ALICE, activeContract } from './samples.js';

const format = eventFormat({ parties: [ALICE] });

function contract(i: number, token?: string): JsGetActiveContractsResponse {
  const entry = activeContract.contractEntry.JsActiveContract;
  return {
    ...activeContract,
    contractEntry: {
      JsActiveContract: {
        ...entry,
        createdEvent: { ...entry.createdEvent, contractId: `00c${i}` },
      },
    },
    ...(token === undefined ? {} : { streamContinuationToken: token }),
  };
}

async function collect(it: AsyncIterable<JsGetActiveContractsResponse>): Promise<string[]> {
  const ids: string[] = [];
  for await (const e of it) {
    const c = e.contractEntry as { JsActiveContract: { createdEvent: { contractId: string } } };
    ids.push(c.JsActiveContract.createdEvent.contractId);
  }
  return ids;
}

/** Fake sources over 5 contracts; every request and answer is checked against the 3.5 spec. */
function sources(opts: { tokens: boolean }): ActiveContractsSources & { calls: unknown[] } {
  const all = [0, 1, 2, 3, 4].map((i) => contract(i, opts.tokens ? `t${i}` : undefined));
  const calls: unknown[] = [];
  const routes = specRoutes('openapi-3.5');
  return {
    calls,
    listActiveContracts: (req, { limit }) => {
      routes.assertRequest('POST', '/v2/state/active-contracts', req);
      calls.push({ ...req, limit });
      const start =
        req.streamContinuationToken === undefined
          ? 0
          : Number(req.streamContinuationToken.slice(1)) + 1;
      const chunk = all.slice(start, start + limit);
      routes.assertResponse('POST', '/v2/state/active-contracts', 200, chunk);
      return Promise.resolve(chunk);
    },
    activeContractsPage: (req: GetActiveContractsPageRequest) => {
      routes.assertRequest('POST', '/v2/state/active-contracts-page', req);
      calls.push(req);
      const start = req.pageToken === undefined ? 0 : Number(req.pageToken);
      const size = req.maxPageSize ?? 200;
      const end = start + size;
      const page = {
        activeContracts: all.slice(start, end),
        activeAtOffset: 9,
        ...(end < all.length ? { nextPageToken: String(end) } : {}),
      };
      routes.assertResponse('POST', '/v2/state/active-contracts-page', 200, page);
      return Promise.resolve(page);
    },
    async *activeContractsSocket(req) {
      calls.push(req);
      await Promise.resolve();
      yield* all;
    },
  };
}

describe('readActiveContracts', () => {
  const request = { activeAtOffset: 9, eventFormat: format };
  const expected = ['00c0', '00c1', '00c2', '00c3', '00c4'];

  it('yields the same contracts over websocket, list and page', async () => {
    for (const mode of ['websocket', 'list', 'page'] as const) {
      const src = sources({ tokens: true });
      expect(await collect(readActiveContracts(src, request, { mode, pageSize: 2 }))).toEqual(
        expected,
      );
    }
  });

  it('pages the list form with the continuation token of the last element', async () => {
    const src = sources({ tokens: true });
    await collect(readActiveContracts(src, request, { mode: 'list', pageSize: 2 }));
    expect(
      src.calls.map((c) => (c as { streamContinuationToken?: string }).streamContinuationToken),
    ).toEqual([undefined, 't1', 't3']);
  });

  it('follows nextPageToken until the last page', async () => {
    const src = sources({ tokens: false });
    await collect(readActiveContracts(src, request, { mode: 'page', pageSize: 2 }));
    expect(src.calls.map((c) => (c as { pageToken?: string }).pageToken)).toEqual([
      undefined,
      '2',
      '4',
    ]);
  });

  it('refuses to guess when a full list chunk carries no continuation token (3.4)', async () => {
    const src = sources({ tokens: false });
    await expect(
      collect(readActiveContracts(src, request, { mode: 'list', pageSize: 2 })),
    ).rejects.toThrow(/more than 2 contracts.*websocket/);
  });

  it('stops between pages when aborted', async () => {
    const src = sources({ tokens: false });
    const ac = new AbortController();
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const e of readActiveContracts(src, request, {
          mode: 'page',
          pageSize: 2,
          signal: ac.signal,
        })) {
          seen.push(e.workflowId ?? '');
          ac.abort();
        }
      })(),
    ).rejects.toThrow(/abort/i);
    expect(src.calls).toHaveLength(1);
  });
});
