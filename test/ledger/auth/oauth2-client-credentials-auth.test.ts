import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AbortError } from '../../../src/core/abort-error.js';
import { FakeClock } from '../../../src/core/fake-clock.js';
import { AuthError } from '../../../src/ledger/auth/auth-error.js';
import {
  OAuth2ClientCredentialsAuth,
  type OAuth2ClientCredentialsOptions,
} from '../../../src/ledger/auth/oauth2-client-credentials-auth.js';
import { classify } from '../../../src/ledger/classify.js';
import { closedPortUrl, TokenServer } from './token-server.js';

const SECRET = 's3cr3t-V@lue+with:colon and space';

let server: TokenServer;
let clock: FakeClock;
const providers: OAuth2ClientCredentialsAuth[] = [];

beforeEach(async () => {
  server = await TokenServer.start();
  clock = new FakeClock();
});

afterEach(async () => {
  for (const p of providers.splice(0)) await p.close();
  await server.close();
});

function provider(
  extra: Partial<OAuth2ClientCredentialsOptions> = {},
): OAuth2ClientCredentialsAuth {
  const p = new OAuth2ClientCredentialsAuth({
    tokenUrl: server.url,
    clientId: 'ledgerbot client',
    clientSecret: SECRET,
    audience: 'https://daml.com/jwt/aud/participant/participant1',
    scope: 'daml_ledger_api',
    clock,
    ...extra,
  });
  providers.push(p);
  return p;
}

async function authError(p: Promise<unknown>): Promise<AuthError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AuthError);
  return err as AuthError;
}

describe('OAuth2ClientCredentialsAuth', () => {
  it('posts the client-credentials form with HTTP Basic client auth by default', async () => {
    expect(await provider().token()).toBe('tok-1');
    expect(server.requests).toHaveLength(1);
    const req = server.requests[0]!;
    expect(req.path).toBe('/oauth/token');
    expect(req.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(req.form)).toEqual({
      grant_type: 'client_credentials',
      audience: 'https://daml.com/jwt/aud/participant/participant1',
      scope: 'daml_ledger_api',
    });
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const [id, secret] = Buffer.from(basic ?? '', 'base64')
      .toString('utf8')
      .split(':');
    // RFC 6749 §2.3.1: both parts are form-urlencoded, so the ':' in the secret is escaped.
    const decode = (s: string | undefined) => new URLSearchParams(`x=${s ?? ''}`).get('x');
    expect(decode(id)).toBe('ledgerbot client');
    expect(decode(secret)).toBe(SECRET);
  });

  it("sends the credentials as form fields with clientAuth 'body'", async () => {
    await provider({ clientAuth: 'body' }).token();
    const req = server.requests[0]!;
    expect(req.headers.authorization).toBeUndefined();
    expect(req.form.get('client_id')).toBe('ledgerbot client');
    expect(req.form.get('client_secret')).toBe(SECRET);
  });

  it('omits audience and scope when not configured', async () => {
    const p = new OAuth2ClientCredentialsAuth({
      tokenUrl: server.url,
      clientId: 'a',
      clientSecret: 'b',
      clock,
    });
    providers.push(p);
    await p.token();
    expect(Object.fromEntries(server.requests[0]!.form)).toEqual({
      grant_type: 'client_credentials',
    });
  });

  it('shares one request among 20 concurrent callers, then serves the cache', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    server.reply = (_req, n) => ({
      status: 200,
      body: JSON.stringify({ access_token: `tok-${n}`, expires_in: 3600 }),
      delayUntil: gate,
    });
    const p = provider();
    const all = Promise.all(Array.from({ length: 20 }, () => p.token()));
    // Let the request reach the server before it answers.
    for (let i = 0; i < 200 && server.requests.length === 0; i++)
      await new Promise((r) => setTimeout(r, 5));
    release();
    expect(new Set(await all)).toEqual(new Set(['tok-1']));
    expect(server.requests).toHaveLength(1);
    expect(await p.token()).toBe('tok-1');
    expect(server.requests).toHaveLength(1);
  });

  it('refreshes at expires_in minus the margin, driven by the clock', async () => {
    const p = provider({ refreshMarginMs: 60_000 });
    expect(await p.token()).toBe('tok-1');
    await clock.advance(3_540_000 - 1);
    expect(await p.token()).toBe('tok-1');
    expect(server.requests).toHaveLength(1);
    await clock.advance(1);
    expect(await p.token()).toBe('tok-2');
    expect(server.requests).toHaveLength(2);
  });

  it('caps the margin at half the lifetime of short-lived tokens', async () => {
    server.reply = (_r, n) => ({
      status: 200,
      body: JSON.stringify({ access_token: `tok-${n}`, expires_in: 60 }),
    });
    const p = provider({ refreshMarginMs: 300_000 });
    await p.token();
    await clock.advance(29_999);
    expect(await p.token()).toBe('tok-1');
    await clock.advance(1);
    expect(await p.token()).toBe('tok-2');
  });

  it('assumes the default lifetime without expires_in (and accepts expires_in as a string)', async () => {
    server.reply = (_r, n) => ({ status: 200, body: JSON.stringify({ access_token: `tok-${n}` }) });
    const p = provider({ defaultLifetimeMs: 100_000, refreshMarginMs: 10_000 });
    await p.token();
    await clock.advance(89_999);
    expect(await p.token()).toBe('tok-1');
    server.reply = (_r, n) => ({
      status: 200,
      body: JSON.stringify({ access_token: `tok-${n}`, expires_in: '120' }),
    });
    await clock.advance(1);
    expect(await p.token()).toBe('tok-2');
    await clock.advance(119_000 - 60_000 - 1);
    expect(await p.token()).toBe('tok-2');
  });

  it('keeps serving a still-valid token when a refresh fails, then fails after expiry', async () => {
    const p = provider({ refreshMarginMs: 60_000 });
    await p.token();
    server.reply = () => ({ status: 503, body: 'down' });
    await clock.advance(3_550_000);
    expect(await p.token()).toBe('tok-1');
    expect(server.requests).toHaveLength(2);
    await clock.advance(50_000);
    const err = await authError(p.token());
    expect(err.code).toBe('AUTH_OAUTH2_UNAVAILABLE');
    expect(err.retryable).toBe(true);
    expect(classify(err)).toBe('retryable');
  });

  it('fetches anew after invalidate()', async () => {
    const p = provider();
    await p.token();
    p.invalidate();
    expect(await p.token()).toBe('tok-2');
    expect(server.requests).toHaveLength(2);
  });

  it('a 401 is a final AUTH_OAUTH2_REJECTED naming the URL, never the secret', async () => {
    server.reply = () => ({
      status: 401,
      body: JSON.stringify({ error: 'invalid_client', error_description: `bad secret ${SECRET}` }),
    });
    const err = await authError(provider().token());
    expect(err.code).toBe('AUTH_OAUTH2_REJECTED');
    expect(err.retryable).toBe(false);
    expect(classify(err)).toBe('final');
    expect(err.message).toContain(server.url);
    expect(err.message).toContain('401');
    expect(err.message).toContain('invalid_client');
    expect(err.message).not.toContain(SECRET);
    expect(err.message).toContain('[redacted]');
  });

  it('an answer without access_token is AUTH_OAUTH2_BAD_RESPONSE', async () => {
    server.reply = () => ({ status: 200, body: '<html>login</html>' });
    expect((await authError(provider().token())).code).toBe('AUTH_OAUTH2_BAD_RESPONSE');
  });

  it('an unreachable endpoint is a retryable AUTH_OAUTH2_UNREACHABLE', async () => {
    const url = await closedPortUrl();
    const err = await authError(provider({ tokenUrl: url }).token());
    expect(err.code).toBe('AUTH_OAUTH2_UNREACHABLE');
    expect(err.retryable).toBe(true);
    expect(err.message).toContain(url);
    expect(err.message).not.toContain(SECRET);
  });

  it('redacts user info and query values of the token URL in messages', async () => {
    server.reply = () => ({ status: 400, body: '{}' });
    const url = server.url.replace('http://', 'http://user:pw-123@') + '?key=k-456';
    const err = await authError(provider({ tokenUrl: url }).token());
    expect(err.message).not.toContain('pw-123');
    expect(err.message).not.toContain('k-456');
  });

  it('one caller aborting does not cancel the shared request for the others', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    server.reply = (_r, n) => ({
      status: 200,
      body: JSON.stringify({ access_token: `tok-${n}` }),
      delayUntil: gate,
    });
    const p = provider();
    const ac = new AbortController();
    const aborted = p.token(ac.signal);
    const other = p.token();
    ac.abort();
    await expect(aborted).rejects.toBeInstanceOf(AbortError);
    release();
    expect(await other).toBe('tok-1');
    expect(server.requests).toHaveLength(1);
  });

  it('close() fails the pending request and later calls with AUTH_CLOSED', async () => {
    server.reply = () => ({ status: 200, body: '{}', delayUntil: new Promise(() => undefined) });
    const p = provider();
    const pending = p.token();
    for (let i = 0; i < 200 && server.requests.length === 0; i++)
      await new Promise((r) => setTimeout(r, 5));
    const failed = authError(pending);
    await p.close();
    await p.close();
    expect((await failed).code).toBe('AUTH_CLOSED');
    expect((await authError(p.token())).code).toBe('AUTH_CLOSED');
  });

  it('rejects a config without a secret or with a bad URL, without I/O', () => {
    expect(() => provider({ clientSecret: ' ' })).toThrow(/clientSecret/);
    expect(() => provider({ tokenUrl: 'not a url' })).toThrow(AuthError);
    expect(() => provider({ tokenUrl: 'ftp://x/y' })).toThrow(/http/);
    expect(server.requests).toHaveLength(0);
  });
});
