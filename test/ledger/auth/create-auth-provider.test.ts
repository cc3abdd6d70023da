import { describe, expect, it } from 'vitest';
import { AbortError } from '../../../src/core/abort-error.js';
import { AuthError } from '../../../src/ledger/auth/auth-error.js';
import {
  createAuthProvider,
  redactAuthConfig,
  type AuthConfig,
} from '../../../src/ledger/auth/create-auth-provider.js';
import { NoAuth } from '../../../src/ledger/auth/no-auth.js';
import { OAuth2ClientCredentialsAuth } from '../../../src/ledger/auth/oauth2-client-credentials-auth.js';
import { StaticTokenAuth } from '../../../src/ledger/auth/static-token-auth.js';
import { TokenFileAuth } from '../../../src/ledger/auth/token-file-auth.js';

describe('createAuthProvider', () => {
  it('builds the provider for each type without I/O', () => {
    expect(createAuthProvider({ type: 'none' })).toBeInstanceOf(NoAuth);
    expect(createAuthProvider({ type: 'static', token: 't' })).toBeInstanceOf(StaticTokenAuth);
    // A path that does not exist: construction must not touch it.
    expect(createAuthProvider({ type: 'file', path: '/nonexistent/token' })).toBeInstanceOf(
      TokenFileAuth,
    );
    expect(
      createAuthProvider({
        type: 'oauth2',
        tokenUrl: 'http://127.0.0.1:9/t',
        clientId: 'a',
        clientSecret: 'b',
      }),
    ).toBeInstanceOf(OAuth2ClientCredentialsAuth);
  });

  it('none sends no token; static sends the trimmed token', async () => {
    expect(await createAuthProvider({ type: 'none' }).token()).toBeUndefined();
    const s = createAuthProvider({ type: 'static', token: ' abc \n' });
    expect(await s.token()).toBe('abc');
    s.invalidate();
    expect(await s.token()).toBe('abc');
  });

  it('honours an aborted signal', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(createAuthProvider({ type: 'none' }).token(ac.signal)).rejects.toBeInstanceOf(
      AbortError,
    );
    await expect(
      createAuthProvider({ type: 'static', token: 'x' }).token(ac.signal),
    ).rejects.toBeInstanceOf(AbortError);
  });

  it('rejects empty values and unknown types with AUTH_CONFIG_INVALID', () => {
    const bad: unknown[] = [
      { type: 'static', token: '  ' },
      { type: 'file', path: '' },
      { type: 'oauth2', tokenUrl: 'http://x/t', clientId: '', clientSecret: 'b' },
      { type: 'kerberos' },
      // A JavaScript caller's unset environment variables (process.env.SECRET!): missing fields.
      { type: 'static' },
      { type: 'static', token: 42 },
      { type: 'file' },
      { type: 'oauth2', tokenUrl: 'http://x/t', clientId: 'a', clientSecret: undefined },
      { type: 'oauth2', clientId: 'a', clientSecret: 'b' },
    ];
    for (const c of bad) {
      let err: unknown;
      try {
        createAuthProvider(c as AuthConfig);
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(c)).toBeInstanceOf(AuthError);
      expect((err as AuthError).code).toBe('AUTH_CONFIG_INVALID');
    }
    expect(() =>
      createAuthProvider({ type: 'oauth2', tokenUrl: 'http://x/t', clientId: 'a' } as AuthConfig),
    ).toThrow(
      'OAuth2 auth needs a non-empty clientSecret; it is missing (an unset environment variable?).',
    );
    expect(() => createAuthProvider({ type: 'static' } as AuthConfig)).toThrow(
      'The static auth token is missing: set auth.token.',
    );
  });

  it('redactAuthConfig keeps the shape and hides the secrets', () => {
    expect(redactAuthConfig({ type: 'static', token: 'abc' })).toEqual({
      type: 'static',
      token: '[redacted]',
    });
    expect(
      redactAuthConfig({
        type: 'oauth2',
        tokenUrl: 'https://u:p@idp/t?x=1',
        clientId: 'bot',
        clientSecret: 'shh',
        scope: 's',
      }),
    ).toEqual({
      type: 'oauth2',
      tokenUrl: 'https://redacted:redacted@idp/t?x=redacted',
      clientId: 'bot',
      clientSecret: '[redacted]',
      scope: 's',
    });
    expect(redactAuthConfig({ type: 'file', path: '/run/token' })).toEqual({
      type: 'file',
      path: '/run/token',
    });
  });
});
