import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { AUDIENCE_PREFIX, websocketToken } from '../../../src/sandbox/server/sandbox-auth.js';
import { specValidator } from '../../support/spec-validator.js';
import { call, keylessCommands, startTestSandbox, wildcard, wsCollect } from './sandbox-fixture.js';

const SECRET = 'test-secret-of-sufficient-length-123';
const openapi = specValidator('openapi-3.5');
const asyncapi = specValidator('asyncapi-3.5');

type ErrorBody = {
  code: string;
  errorCategory: number;
  grpcCodeValue: number;
  context: Record<string, string>;
  cause: string;
};

let sb: Sandbox;

async function token(
  sub: string,
  opts: { aud?: string | string[]; secret?: string; expSeconds?: number; scope?: string } = {},
): Promise<string> {
  const claims: Record<string, unknown> = {};
  if (opts.scope !== undefined) claims.scope = opts.scope;
  let jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject(sub);
  const aud = opts.aud ?? `${AUDIENCE_PREFIX}${sb.participantId}`;
  if (aud !== '') jwt = jwt.setAudience(aud);
  jwt = jwt.setExpirationTime(Math.floor(Date.now() / 1000) + (opts.expSeconds ?? 3600));
  return jwt.sign(new TextEncoder().encode(opts.secret ?? SECRET));
}

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

function expectRedacted(
  r: { status: number; body: unknown },
  status: number,
  grpc: number,
): ErrorBody {
  expect(r.status).toBe(status);
  openapi.assert('JsCantonError', r.body);
  const b = r.body as ErrorBody;
  expect(b.code).toBe('NA');
  expect(b.errorCategory).toBe(-1);
  expect(b.grpcCodeValue).toBe(grpc);
  expect(b.cause).toBe('A security-sensitive error has been received');
  return b;
}

beforeAll(async () => {
  sb = await startTestSandbox({ auth: { hs256: SECRET } });
});

afterAll(async () => {
  await sb.stop();
});

describe('hs256 auth', () => {
  it('accepts a valid audience-based user token', async () => {
    const t = await token('alice-bot');
    const r = await call(
      sb,
      'POST',
      '/v2/commands/submit-and-wait',
      keylessCommands(sb),
      bearer(t),
    );
    expect(r.status).toBe(200);
    const me = await call(sb, 'GET', '/v2/authenticated-user', undefined, bearer(t));
    expect((me.body as { user: { id: string } }).user.id).toBe('alice-bot');
  });

  it('lets commands omit userId with a user token', async () => {
    const cmd = keylessCommands(sb);
    delete cmd.userId;
    const r = await call(
      sb,
      'POST',
      '/v2/commands/submit-and-wait',
      cmd,
      bearer(await token('alice-bot')),
    );
    expect(r.status).toBe(200);
  });

  it('accepts a scope-based token (daml_ledger_api)', async () => {
    const t = await token('alice-bot', { aud: '', scope: 'daml_ledger_api' });
    expect((await call(sb, 'GET', '/v2/state/ledger-end', undefined, bearer(t))).status).toBe(200);
  });

  it('answers 401 (redacted) without a token, with a bad signature, an expired token or a foreign audience', async () => {
    expectRedacted(await call(sb, 'GET', '/v2/state/ledger-end'), 401, 16);
    const bad = [
      await token('alice-bot', { secret: 'another-secret-of-sufficient-length' }),
      await token('alice-bot', { expSeconds: -60 }),
      await token('alice-bot', { aud: `${AUDIENCE_PREFIX}other::1220ab` }),
      await token('alice-bot', { aud: 'https://example.com' }),
    ];
    for (const t of bad) {
      const b = expectRedacted(
        await call(sb, 'GET', '/v2/state/ledger-end', undefined, bearer(t)),
        401,
        16,
      );
      expect(b.context).toEqual({});
    }
  });

  it('answers 400 for an empty bearer token', async () => {
    const r = await call(sb, 'GET', '/v2/state/ledger-end', undefined, {
      authorization: 'Bearer ',
    });
    expect(r.status).toBe(400);
  });

  it('answers 403 "invalid token" for a token of an unknown user', async () => {
    const b = expectRedacted(
      await call(sb, 'GET', '/v2/state/ledger-end', undefined, bearer(await token('mallory'))),
      403,
      7,
    );
    expect(b.context).toEqual({ ledger_api_error: 'invalid token' });
  });

  it('enforces CanActAs, CanReadAs, ParticipantAdmin and CanReadAsAnyParty (403, redacted)', async () => {
    const alice = await token('alice-bot');
    const asBob = keylessCommands(sb, {}, 'Bob', 'alice-bot');
    const denied = expectRedacted(
      await call(sb, 'POST', '/v2/commands/async/submit', asBob, bearer(alice)),
      403,
      7,
    );
    expect(denied.context).toEqual({});
    // Acting under another user's id is denied too.
    expectRedacted(
      await call(
        sb,
        'POST',
        '/v2/commands/async/submit',
        keylessCommands(sb, { userId: 'bob-bot' }),
        bearer(alice),
      ),
      403,
      7,
    );
    // Reading as Bob.
    expectRedacted(
      await call(
        sb,
        'POST',
        '/v2/state/active-contracts',
        { activeAtOffset: 0, eventFormat: wildcard(sb.parties.Bob!) },
        bearer(alice),
      ),
      403,
      7,
    );
    // Admin endpoints.
    expectRedacted(
      await call(sb, 'POST', '/v2/parties', { partyIdHint: 'Eve' }, bearer(alice)),
      403,
      7,
    );
    const admin = await token('participant_admin');
    expect(
      (await call(sb, 'POST', '/v2/parties', { partyIdHint: 'Eve' }, bearer(admin))).status,
    ).toBe(200);
    // Any-party reads.
    const anyParty = { activeAtOffset: 0, eventFormat: { filtersForAnyParty: {} } };
    expectRedacted(
      await call(sb, 'POST', '/v2/state/active-contracts', anyParty, bearer(alice)),
      403,
      7,
    );
    expectRedacted(
      await call(sb, 'POST', '/v2/state/active-contracts', anyParty, bearer(admin)),
      403,
      7,
    );
    const grant = await call(
      sb,
      'POST',
      '/v2/users/alice-bot/rights',
      { userId: 'alice-bot', rights: [{ kind: { CanReadAsAnyParty: { value: {} } } }] },
      bearer(admin),
    );
    expect(grant.status).toBe(200);
    expect(
      (await call(sb, 'POST', '/v2/state/active-contracts', anyParty, bearer(alice))).status,
    ).toBe(200);
    await call(
      sb,
      'PATCH',
      '/v2/users/alice-bot/rights',
      { userId: 'alice-bot', rights: [{ kind: { CanReadAsAnyParty: { value: {} } } }] },
      bearer(admin),
    );
    expectRedacted(
      await call(sb, 'POST', '/v2/state/active-contracts', anyParty, bearer(alice)),
      403,
      7,
    );
  });

  it('health endpoints answer without a token', async () => {
    expect((await call(sb, 'GET', '/livez')).status).toBe(200);
    expect((await call(sb, 'GET', '/readyz')).status).toBe(200);
  });
});

describe('websocket auth', () => {
  const request = () => ({ userId: 'alice-bot', parties: [sb.parties.Alice], beginExclusive: 0 });

  it('takes the token from the first jwt.token. subprotocol and answers daml.ws.auth', async () => {
    const t = await token('alice-bot');
    await call(sb, 'POST', '/v2/commands/submit-and-wait', keylessCommands(sb), bearer(t));
    const r = await wsCollect(sb, '/v2/commands/completions', request(), {
      protocols: [`jwt.token.${t}`, 'daml.ws.auth'],
      count: 1,
    });
    expect(r.protocol).toBe('daml.ws.auth');
    asyncapi.assert('Either_JsCantonError_CompletionStreamResponse', r.frames[0]);
    expect(r.frames[0]).toHaveProperty('completionResponse');
  });

  it('accepts the Authorization header on the upgrade', async () => {
    const r = await wsCollect(sb, '/v2/commands/completions', request(), {
      headers: bearer(await token('alice-bot')),
      count: 1,
    });
    expect(r.frames[0]).toHaveProperty('completionResponse');
  });

  it('parses the subprotocol header like Canton: split on "," without trimming, first match', () => {
    expect(websocketToken('jwt.token.abc,daml.ws.auth')).toBe('abc');
    expect(websocketToken('daml.ws.auth,jwt.token.abc,jwt.token.def')).toBe('abc');
    // Browsers join with ", ": a token listed second then starts with a space and is not found.
    expect(websocketToken('daml.ws.auth, jwt.token.abc')).toBeUndefined();
    expect(websocketToken(undefined)).toBeUndefined();
  });

  it('a token that does not verify: the upgrade succeeds, then one redacted 401 frame and close', async () => {
    const r = await wsCollect(sb, '/v2/commands/completions', request(), {
      protocols: ['jwt.token.not-a-jwt', 'daml.ws.auth'],
    });
    expect(r.frames).toHaveLength(1);
    asyncapi.assert('Either_JsCantonError_CompletionStreamResponse', r.frames[0]);
    expect(r.frames[0]).toMatchObject({ code: 'NA', grpcCodeValue: 16, errorCategory: -1 });
    expect(r.closeCode).toBe(1000);
  });

  it('a missing party right is an error frame (403 as grpc 7)', async () => {
    const t = await token('alice-bot');
    const r = await wsCollect(
      sb,
      '/v2/commands/completions',
      { userId: 'alice-bot', parties: [sb.parties.Bob], beginExclusive: 0 },
      { protocols: [`jwt.token.${t}`, 'daml.ws.auth'] },
    );
    expect(r.frames).toEqual([expect.objectContaining({ code: 'NA', grpcCodeValue: 7 })]);
  });

  it('a token of an unknown user fails the upgrade with HTTP 403', async () => {
    const t = await token('mallory');
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(sb.url.replace('http', 'ws') + '/v2/updates', [
        `jwt.token.${t}`,
        'daml.ws.auth',
      ]);
      ws.on('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        ws.terminate();
      });
      ws.on('open', () => reject(new Error('upgrade should fail')));
      ws.on('error', () => undefined);
    });
    expect(status).toBe(403);
  });
});

describe('auth none', () => {
  it('accepts anything, and takes the user from an unverified token', async () => {
    const open = await startTestSandbox({ auth: 'none' });
    try {
      expect((await call(open, 'POST', '/v2/parties', { partyIdHint: 'Zed' })).status).toBe(200);
      const cmd = keylessCommands(open);
      delete cmd.userId;
      const noUser = await call(open, 'POST', '/v2/commands/submit-and-wait', cmd);
      expect((noUser.body as { code: string }).code).toBe('MISSING_FIELD');
      const t = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('alice-bot')
        .sign(new TextEncoder().encode('whatever-secret-0123456789abcdef'));
      expect(
        (await call(open, 'POST', '/v2/commands/submit-and-wait', cmd, bearer(t))).status,
      ).toBe(200);
    } finally {
      await open.stop();
    }
  });
});
