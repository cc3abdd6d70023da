import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/fake-clock.js';
import type { AuthProvider } from '../../../src/ledger/auth/auth-provider.js';
import {
  createAuthProvider,
  redactAuthConfig,
  type AuthConfig,
} from '../../../src/ledger/auth/create-auth-provider.js';
import { closedPortUrl, TokenServer } from './token-server.js';

const CLIENT_SECRET = 'client-secret-8f2b1c';
const ISSUED_TOKEN = 'eyJhbGciOiJSUzI1NiJ9.issued-token-77aa';
const STATIC_TOKEN = 'static-token-5d9e31';
const FILE_TOKEN = 'file-token-0c4b22';
const SECRETS = [CLIENT_SECRET, ISSUED_TOKEN, STATIC_TOKEN, FILE_TOKEN];

let server: TokenServer;
let dir: string;

beforeEach(async () => {
  server = await TokenServer.start();
  server.reply = () => ({
    status: 200,
    body: JSON.stringify({ access_token: ISSUED_TOKEN, expires_in: 3600 }),
  });
  dir = await mkdtemp(join(tmpdir(), 'ledgerbot-secrets-'));
  await writeFile(join(dir, 'token'), FILE_TOKEN);
});

afterEach(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** Everything a careless caller might do with a provider, a config or an error. */
function renderings(value: unknown): string[] {
  const lines: string[] = [];
  const log = pino({ level: 'trace' }, { write: (s: string) => void lines.push(s) });
  log.info({ value }, 'rendering');
  log.error({ err: value }, 'rendering as err');
  return [
    inspect(value, { depth: 10, showHidden: true }),
    JSON.stringify(value) ?? '',
    String(value),
    `${value as string}`,
    ...lines,
  ];
}

function expectNoSecret(value: unknown): void {
  for (const text of renderings(value)) {
    for (const s of SECRETS) expect(text).not.toContain(s);
  }
}

function configs(tokenUrl: string): AuthConfig[] {
  return [
    { type: 'none' },
    { type: 'static', token: STATIC_TOKEN },
    { type: 'file', path: join(dir, 'token') },
    {
      type: 'oauth2',
      tokenUrl,
      clientId: 'bot',
      clientSecret: CLIENT_SECRET,
      audience: 'aud',
      scope: 's',
    },
  ];
}

describe('secrets never leak', () => {
  it('through a provider that has fetched its token (inspect, JSON, String, pino)', async () => {
    const providers: AuthProvider[] = configs(server.url).map((c) =>
      createAuthProvider(c, { clock: new FakeClock() }),
    );
    const tokens = await Promise.all(providers.map((p) => p.token()));
    // The providers really hold the secrets, so the checks below are meaningful.
    expect(tokens).toEqual([undefined, STATIC_TOKEN, FILE_TOKEN, ISSUED_TOKEN]);
    for (const p of providers) expectNoSecret(p);
    expectNoSecret({ nested: { auth: providers } });
    for (const p of providers) await p.close();
  });

  it('through a redacted config', () => {
    for (const c of configs(server.url)) expectNoSecret(redactAuthConfig(c));
    // ...and the check itself catches a raw config.
    expect(() => expectNoSecret(configs(server.url)[3])).toThrow();
  });

  it('through token endpoint errors that echo the secret (401, 5xx, unreachable)', async () => {
    server.reply = () => ({
      status: 401,
      body: JSON.stringify({ error: 'invalid_client', error_description: `got ${CLIENT_SECRET}` }),
    });
    const rejected = createAuthProvider(configs(server.url)[3]!, { clock: new FakeClock() });
    const e401 = await rejected.token().catch((e: unknown) => e);
    expect(e401).toBeInstanceOf(Error);
    expectNoSecret(e401);

    server.reply = () => ({
      status: 500,
      body: JSON.stringify({ error: 'server_error', error_description: CLIENT_SECRET }),
    });
    const e500 = await rejected.token().catch((e: unknown) => e);
    expect((e500 as Error).message).toContain('500');
    expectNoSecret(e500);

    const unreachable = createAuthProvider(configs(await closedPortUrl())[3]!, {
      clock: new FakeClock(),
    });
    const eConn = await unreachable.token().catch((e: unknown) => e);
    expect(eConn).toBeInstanceOf(Error);
    expectNoSecret(eConn);
    expectNoSecret(unreachable);
  });

  it('through token file errors', async () => {
    await writeFile(join(dir, 'token'), '   ');
    const err = await createAuthProvider(configs(server.url)[2]!)
      .token()
      .catch((e: unknown) => e);
    expect((err as Error).message).toContain(join(dir, 'token'));
    expectNoSecret(err);
  });
});
