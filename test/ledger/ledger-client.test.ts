import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventFormat, transactionFormat, updateFormat } from '../../src/ledger/filters.js';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import { LedgerTransportError } from '../../src/ledger/ledger-transport-error.js';
import { LedgerUsageError } from '../../src/ledger/ledger-usage-error.js';
import { expectSpecCall, MockLedger, ORIGIN, specResponse } from './mock-ledger.js';
import * as S from './samples.js';

let m: MockLedger;
let client: LedgerClient;

beforeEach(async () => {
  m = new MockLedger();
  client = await LedgerClient.create({ url: ORIGIN, dispatcher: m.agent });
});

afterEach(async () => {
  await client.close();
  await m.close();
});

const acsFormat = eventFormat({ parties: [S.ALICE], templates: [S.TEMPLATE] });
const txFormat = transactionFormat(acsFormat);
const updFormat = updateFormat({ transactions: txFormat });

function json(method: string, path: string, body: unknown, status = 200): void {
  m.replyJson(status, specResponse(method, path, status, body));
}

function only(): (typeof m.calls)[number] | undefined {
  expect(m.calls).toHaveLength(1);
  return m.calls[0];
}

describe('LedgerClient state endpoints', () => {
  it('ledgerEnd GETs /v2/state/ledger-end and returns the offset', async () => {
    json('GET', '/v2/state/ledger-end', { offset: 42 });
    await expect(client.ledgerEnd()).resolves.toBe(42);
    const c = expectSpecCall(only(), 'GET', '/v2/state/ledger-end');
    expect(c.body).toBeUndefined();
    expect([...c.query.keys()]).toEqual([]);
  });

  it('ledgerEnd rejects an answer whose offset is not a number', async () => {
    m.replyJson(200, { offset: '42' });
    await expect(client.ledgerEnd()).rejects.toMatchObject({ failure: 'bad-response' });
  });

  it('latestPrunedOffsets GETs /v2/state/latest-pruned-offsets', async () => {
    const body = { participantPrunedUpToInclusive: 5, allDivulgedContractsPrunedUpToInclusive: 3 };
    json('GET', '/v2/state/latest-pruned-offsets', body);
    await expect(client.latestPrunedOffsets()).resolves.toEqual(body);
    expectSpecCall(only(), 'GET', '/v2/state/latest-pruned-offsets');
  });

  it('connectedSynchronizers passes its query and leaves out unset keys', async () => {
    const body = {
      connectedSynchronizers: [
        {
          synchronizerAlias: 'global',
          synchronizerId: S.SYNC,
          permission: 'PARTICIPANT_PERMISSION_SUBMISSION',
        },
      ],
    };
    json('GET', '/v2/state/connected-synchronizers', body);
    await expect(client.connectedSynchronizers({ party: S.ALICE })).resolves.toEqual(body);
    const c = expectSpecCall(only(), 'GET', '/v2/state/connected-synchronizers');
    expect([...c.query.entries()]).toEqual([['party', S.ALICE]]);
  });

  it('listActiveContracts POSTs eventFormat with limit 200 by default', async () => {
    json('POST', '/v2/state/active-contracts', [S.activeContract]);
    const res = await client.listActiveContracts({ activeAtOffset: 42, eventFormat: acsFormat });
    expect(res).toEqual([S.activeContract]);
    const c = expectSpecCall(only(), 'POST', '/v2/state/active-contracts');
    expect(c.body).toEqual({ activeAtOffset: 42, eventFormat: acsFormat });
    expect(c.query.get('limit')).toBe('200');
    expect(c.query.has('stream_idle_timeout_ms')).toBe(false);
  });

  it('listActiveContracts passes limit, idle timeout and continuation token', async () => {
    json('POST', '/v2/state/active-contracts', []);
    await client.listActiveContracts(
      { activeAtOffset: 42, eventFormat: acsFormat, streamContinuationToken: 'tok' },
      { limit: 10, streamIdleTimeoutMs: 300 },
    );
    const c = expectSpecCall(only(), 'POST', '/v2/state/active-contracts', { only35: true });
    expect(c.query.get('limit')).toBe('10');
    expect(c.query.get('stream_idle_timeout_ms')).toBe('300');
    expect(c.body).toMatchObject({ streamContinuationToken: 'tok' });
  });

  it.each([0, 201, 1.5])('list calls reject limit %s without a request', async (limit) => {
    await expect(
      client.listActiveContracts({ activeAtOffset: 1, eventFormat: acsFormat }, { limit }),
    ).rejects.toBeInstanceOf(LedgerUsageError);
    expect(m.calls).toHaveLength(0);
  });

  it('never sends the legacy filter/verbose even when a JS caller passes them', async () => {
    json('POST', '/v2/state/active-contracts', []);
    const legacy = { activeAtOffset: 1, eventFormat: acsFormat, filter: {}, verbose: true };
    await client.listActiveContracts(legacy);
    expect(Object.keys(only()?.body as object).sort()).toEqual(['activeAtOffset', 'eventFormat']);
  });

  it('a list call rejects an answer that is not an array', async () => {
    m.replyJson(200, { oops: true });
    await expect(
      client.listActiveContracts({ activeAtOffset: 1, eventFormat: acsFormat }),
    ).rejects.toBeInstanceOf(LedgerTransportError);
  });

  it('activeContractsPage POSTs /v2/state/active-contracts-page', async () => {
    const body = { activeContracts: [S.activeContract], activeAtOffset: 42, nextPageToken: 'n' };
    json('POST', '/v2/state/active-contracts-page', body);
    const req = { eventFormat: acsFormat, maxPageSize: 50, pageToken: 'p' };
    await expect(client.activeContractsPage(req)).resolves.toEqual(body);
    expect(expectSpecCall(only(), 'POST', '/v2/state/active-contracts-page').body).toEqual(req);
  });
});

describe('LedgerClient update endpoints', () => {
  it('listUpdates sends both beginExclusive and updateFormat (3.4 and 3.5 valid)', async () => {
    const answer = [
      { update: { Transaction: { value: S.transaction } } },
      { update: { OffsetCheckpoint: { value: S.checkpoint } } },
    ];
    json('POST', '/v2/updates', answer);
    const res = await client.listUpdates(
      { beginExclusive: 0, endInclusive: 8, updateFormat: updFormat },
      { limit: 50 },
    );
    expect(res).toEqual(answer);
    const c = expectSpecCall(only(), 'POST', '/v2/updates');
    expect(c.body).toEqual({ beginExclusive: 0, endInclusive: 8, updateFormat: updFormat });
    expect(c.query.get('limit')).toBe('50');
  });

  it('listUpdates keeps descendingOrder and drops legacy fields', async () => {
    json('POST', '/v2/updates', []);
    const req = { beginExclusive: 3, endInclusive: 9, updateFormat: updFormat };
    await client.listUpdates({ ...req, descendingOrder: true, ...{ filter: {}, verbose: true } });
    const c = expectSpecCall(only(), 'POST', '/v2/updates', { only35: true });
    expect(c.body).toEqual({ ...req, descendingOrder: true });
  });

  it('updatesPage POSTs /v2/updates/get-updates-page', async () => {
    const body = {
      updates: [{ update: { Transaction: { value: S.transaction } } }],
      lowestPageOffsetExclusive: 0,
      highestPageOffsetInclusive: 7,
      nextPageToken: 'next',
    };
    json('POST', '/v2/updates/get-updates-page', body);
    const req = { beginOffsetExclusive: 0, maxPageSize: 10, updateFormat: updFormat };
    await expect(client.updatesPage(req)).resolves.toEqual(body);
    expect(expectSpecCall(only(), 'POST', '/v2/updates/get-updates-page').body).toEqual(req);
  });

  it('updateById POSTs /v2/updates/update-by-id', async () => {
    const body = { update: { Transaction: { value: S.transaction } } };
    json('POST', '/v2/updates/update-by-id', body);
    const req = { updateId: '1220upd', updateFormat: updFormat };
    await expect(client.updateById(req)).resolves.toEqual(body);
    expect(expectSpecCall(only(), 'POST', '/v2/updates/update-by-id').body).toEqual(req);
  });

  it('updateByOffset POSTs /v2/updates/update-by-offset', async () => {
    const body = { update: { Transaction: { value: S.transaction } } };
    json('POST', '/v2/updates/update-by-offset', body);
    const req = { offset: 7, updateFormat: updFormat };
    await expect(client.updateByOffset(req)).resolves.toEqual(body);
    expect(expectSpecCall(only(), 'POST', '/v2/updates/update-by-offset').body).toEqual(req);
  });

  it('eventsByContractId POSTs /v2/events/events-by-contract-id', async () => {
    const body = { created: { createdEvent: S.createdEvent, synchronizerId: S.SYNC } };
    json('POST', '/v2/events/events-by-contract-id', body);
    const req = { contractId: '00cafe', eventFormat: acsFormat };
    await expect(client.eventsByContractId(req)).resolves.toEqual(body);
    expect(expectSpecCall(only(), 'POST', '/v2/events/events-by-contract-id').body).toEqual(req);
  });

  it('transactionById with parties sends requestingParties only (server default format)', async () => {
    json('POST', '/v2/updates/transaction-by-id', { transaction: S.transaction });
    await expect(
      client.transactionById({ updateId: '1220upd', requestingParties: [S.ALICE] }),
    ).resolves.toEqual({ transaction: S.transaction });
    const c = expectSpecCall(only(), 'POST', '/v2/updates/transaction-by-id');
    expect(c.body).toEqual({ updateId: '1220upd', requestingParties: [S.ALICE] });
  });

  it('transactionById with a format sends transactionFormat only', async () => {
    json('POST', '/v2/updates/transaction-by-id', { transaction: S.transaction });
    await client.transactionById({ updateId: '1220upd', transactionFormat: txFormat });
    const c = expectSpecCall(only(), 'POST', '/v2/updates/transaction-by-id');
    expect(c.body).toEqual({ updateId: '1220upd', transactionFormat: txFormat });
  });

  it('transactionById refuses both, neither, or no parties', async () => {
    const both = {
      updateId: 'u',
      requestingParties: [S.ALICE],
      transactionFormat: txFormat,
    } as unknown as Parameters<LedgerClient['transactionById']>[0];
    const neither = { updateId: 'u' } as unknown as Parameters<LedgerClient['transactionById']>[0];
    await expect(client.transactionById(both)).rejects.toBeInstanceOf(LedgerUsageError);
    await expect(client.transactionById(neither)).rejects.toBeInstanceOf(LedgerUsageError);
    await expect(
      client.transactionById({ updateId: 'u', requestingParties: [] }),
    ).rejects.toMatchObject({ code: 'LEDGER_USAGE' });
    expect(m.calls).toHaveLength(0);
  });
});

describe('LedgerClient command endpoints', () => {
  it('submit POSTs JsCommands to /v2/commands/async/submit', async () => {
    json('POST', '/v2/commands/async/submit', {});
    await expect(client.submit(S.commands)).resolves.toEqual({});
    const c = expectSpecCall(only(), 'POST', '/v2/commands/async/submit');
    expect(c.body).toEqual(S.commands);
    expect(c.headers['content-type']).toBe('application/json');
  });

  it('submitAndWait POSTs /v2/commands/submit-and-wait', async () => {
    const body = { updateId: '1220upd', completionOffset: 11 };
    json('POST', '/v2/commands/submit-and-wait', body);
    await expect(client.submitAndWait(S.commands)).resolves.toEqual(body);
    expect(expectSpecCall(only(), 'POST', '/v2/commands/submit-and-wait').body).toEqual(S.commands);
  });

  it('submitAndWaitForTransaction wraps commands and an optional format', async () => {
    const path = '/v2/commands/submit-and-wait-for-transaction';
    json('POST', path, { transaction: S.transaction });
    json('POST', path, { transaction: S.transaction });
    await client.submitAndWaitForTransaction(S.commands);
    await client.submitAndWaitForTransaction(S.commands, txFormat);
    expect(m.calls).toHaveLength(2);
    expect(expectSpecCall(m.calls[0], 'POST', path).body).toEqual({ commands: S.commands });
    expect(expectSpecCall(m.calls[1], 'POST', path).body).toEqual({
      commands: S.commands,
      transactionFormat: txFormat,
    });
  });

  it('listCompletions POSTs /v2/commands/completions with a limit', async () => {
    const answer = [
      { completionResponse: { Completion: { value: S.completion } } },
      { completionResponse: { OffsetCheckpoint: { value: S.checkpoint } } },
    ];
    json('POST', '/v2/commands/completions', answer);
    const req = { userId: 'alice-bot', parties: [S.ALICE], beginExclusive: 4 };
    await expect(client.listCompletions(req, { streamIdleTimeoutMs: 100 })).resolves.toEqual(
      answer,
    );
    const c = expectSpecCall(only(), 'POST', '/v2/commands/completions');
    expect(c.body).toEqual(req);
    expect(c.query.get('limit')).toBe('200');
    expect(c.query.get('stream_idle_timeout_ms')).toBe('100');
  });

  it('listCommandCompletions POSTs /v2/commands/command-completions', async () => {
    json('POST', '/v2/commands/command-completions', []);
    const req = { parties: [S.ALICE], beginExclusive: 4 };
    await expect(client.listCommandCompletions(req, { limit: 5 })).resolves.toEqual([]);
    const c = expectSpecCall(only(), 'POST', '/v2/commands/command-completions');
    expect(c.body).toEqual(req);
    expect(c.query.get('limit')).toBe('5');
  });
});

describe('LedgerClient party endpoints', () => {
  it('allocateParty POSTs /v2/parties', async () => {
    json('POST', '/v2/parties', { partyDetails: S.partyDetails });
    const req = { partyIdHint: 'Alice', identityProviderId: '', userId: 'alice-bot' };
    await expect(client.allocateParty(req)).resolves.toEqual({ partyDetails: S.partyDetails });
    expect(expectSpecCall(only(), 'POST', '/v2/parties').body).toEqual(req);
  });

  it('listParties GETs /v2/parties with the spec query names', async () => {
    const body = { partyDetails: [S.partyDetails], nextPageToken: '' };
    json('GET', '/v2/parties', body);
    await expect(
      client.listParties({ pageSize: 10, pageToken: 'pt', filterParty: 'Ali' }),
    ).resolves.toEqual(body);
    const c = expectSpecCall(only(), 'GET', '/v2/parties');
    expect(Object.fromEntries(c.query)).toEqual({
      'filter-party': 'Ali',
      pageSize: '10',
      pageToken: 'pt',
    });
  });

  it('getParties encodes the party and repeats parties= for the others', async () => {
    json('GET', '/v2/parties/x', { partyDetails: [S.partyDetails] });
    await client.getParties(S.ALICE, [S.BOB, 'Carol::1220aa']);
    const c = expectSpecCall(only(), 'GET', `/v2/parties/${encodeURIComponent(S.ALICE)}`);
    expect(c.query.getAll('parties')).toEqual([S.BOB, 'Carol::1220aa']);
  });

  it('participantId returns the id string', async () => {
    json('GET', '/v2/parties/participant-id', { participantId: 'participant1::1220aa' });
    await expect(client.participantId()).resolves.toBe('participant1::1220aa');
    expectSpecCall(only(), 'GET', '/v2/parties/participant-id');
  });
});

describe('LedgerClient user endpoints', () => {
  it('createUser POSTs /v2/users', async () => {
    json('POST', '/v2/users', { user: S.user });
    const req = { user: { id: 'alice-bot', primaryParty: S.ALICE }, rights: [S.canActAs] };
    await expect(client.createUser(req)).resolves.toEqual({ user: S.user });
    expect(expectSpecCall(only(), 'POST', '/v2/users').body).toEqual(req);
  });

  it('getUser GETs /v2/users/{id} with the id encoded', async () => {
    json('GET', '/v2/users/x', { user: S.user });
    await expect(client.getUser('bot#1')).resolves.toEqual({ user: S.user });
    expectSpecCall(only(), 'GET', '/v2/users/bot%231');
  });

  it('deleteUser DELETEs /v2/users/{id}', async () => {
    json('DELETE', '/v2/users/x', {});
    await expect(client.deleteUser('alice-bot')).resolves.toBeUndefined();
    expect(expectSpecCall(only(), 'DELETE', '/v2/users/alice-bot').body).toBeUndefined();
  });

  it('listUsers GETs /v2/users with paging', async () => {
    const body = { users: [S.user], nextPageToken: '' };
    json('GET', '/v2/users', body);
    await expect(client.listUsers({ pageSize: 5 })).resolves.toEqual(body);
    expect(Object.fromEntries(expectSpecCall(only(), 'GET', '/v2/users').query)).toEqual({
      pageSize: '5',
    });
  });

  it('grantRights POSTs and revokeRights PATCHes /v2/users/{id}/rights', async () => {
    json('POST', '/v2/users/x/rights', { newlyGrantedRights: [S.canActAs] });
    json('PATCH', '/v2/users/x/rights', { newlyRevokedRights: [S.canReadAs] });
    await client.grantRights('alice-bot', [S.canActAs]);
    await client.revokeRights('alice-bot', [S.canReadAs], { identityProviderId: 'idp' });
    expect(m.calls).toHaveLength(2);
    expect(expectSpecCall(m.calls[0], 'POST', '/v2/users/alice-bot/rights').body).toEqual({
      userId: 'alice-bot',
      rights: [S.canActAs],
    });
    expect(expectSpecCall(m.calls[1], 'PATCH', '/v2/users/alice-bot/rights').body).toEqual({
      userId: 'alice-bot',
      rights: [S.canReadAs],
      identityProviderId: 'idp',
    });
  });

  it('listRights GETs /v2/users/{id}/rights', async () => {
    json('GET', '/v2/users/x/rights', { rights: [S.canActAs, S.canReadAs] });
    await expect(client.listRights('alice-bot')).resolves.toEqual({
      rights: [S.canActAs, S.canReadAs],
    });
    expectSpecCall(only(), 'GET', '/v2/users/alice-bot/rights');
  });

  it('authenticatedUser GETs /v2/authenticated-user', async () => {
    json('GET', '/v2/authenticated-user', { user: S.user });
    await expect(client.authenticatedUser()).resolves.toEqual({ user: S.user });
    expectSpecCall(only(), 'GET', '/v2/authenticated-user');
  });

  it('rejects an empty path parameter without a request', async () => {
    await expect(client.getUser('')).rejects.toBeInstanceOf(LedgerUsageError);
    expect(m.calls).toHaveLength(0);
  });
});

describe('LedgerClient packages, version and health', () => {
  it('listPackages returns the package ids', async () => {
    json('GET', '/v2/packages', { packageIds: ['1220a', '1220b'] });
    await expect(client.listPackages()).resolves.toEqual(['1220a', '1220b']);
    expectSpecCall(only(), 'GET', '/v2/packages');
  });

  it('version GETs /v2/version', async () => {
    json('GET', '/v2/version', S.version);
    await expect(client.version()).resolves.toEqual(S.version);
    expectSpecCall(only(), 'GET', '/v2/version');
  });

  it('livez is true on 200 with an empty body and false on 503', async () => {
    m.replyText(200, '', undefined);
    m.replyText(503, 'unavailable');
    await expect(client.livez()).resolves.toBe(true);
    await expect(client.livez()).resolves.toBe(false);
    expect(m.calls.map((c) => `${c.method} ${c.path}`)).toEqual(['GET /livez', 'GET /livez']);
  });

  it('readyz reports ready on 200 and not ready on a text/plain 503', async () => {
    m.replyText(200, '[+] ledger ok (SERVING)\nreadyz check passed\n');
    m.replyText(503, '[-] ledger failed (NOT_SERVING)\nreadyz check failed\n');
    await expect(client.readyz()).resolves.toEqual({
      ready: true,
      text: '[+] ledger ok (SERVING)\nreadyz check passed\n',
    });
    await expect(client.readyz()).resolves.toMatchObject({ ready: false });
    expect(m.calls.map((c) => c.path)).toEqual(['/readyz', '/readyz']);
  });

  it('readyz still throws on answers that are neither 200 nor 503', async () => {
    m.replyText(502, '<html>bad gateway</html>', 'text/html');
    await expect(client.readyz()).rejects.toMatchObject({ failure: 'bad-response', status: 502 });
  });
});

describe('LedgerClient connection', () => {
  it('exposes the connection without the dispatcher, with defaults filled in', () => {
    expect(client.connection.url).toBe(ORIGIN);
    expect(client.connection.requestTimeoutMs).toBe(30_000);
    expect(Object.keys(client.connection)).not.toContain('dispatcher');
    expect(client.transport.connection).toBe(client.connection);
  });

  it('keeps a path prefix of the base URL', async () => {
    const prefixed = await LedgerClient.create({ url: `${ORIGIN}/api/`, dispatcher: m.agent });
    json('GET', '/v2/state/ledger-end', { offset: 1 });
    await prefixed.ledgerEnd();
    expect(only()?.path).toBe('/api/v2/state/ledger-end');
    await prefixed.close();
  });

  it('refuses calls after close, and close is idempotent', async () => {
    await client.close();
    await client.close();
    await expect(client.ledgerEnd()).rejects.toMatchObject({ code: 'ILLEGAL_STATE' });
  });
});
