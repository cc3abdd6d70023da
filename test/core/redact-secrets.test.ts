import { describe, expect, it } from 'vitest';
import { REDACTED, redactSecrets } from '../../src/core/redact-secrets.js';

describe('redactSecrets', () => {
  it('returns the same object when nothing is secret', () => {
    const o = { commandId: 'lb-x', offset: 3, nested: { a: [1, { b: 'c' }] } };
    expect(redactSecrets(o)).toBe(o);
  });

  it('replaces secret fields at any depth and in any case, without touching the input', () => {
    const o = {
      token: 't1',
      headers: { Authorization: 'Bearer t2', accept: 'json' },
      auth: { oauth2: { clientSecret: 't3', clientId: 'id' } },
      list: [{ password: 't4' }, 'plain'],
      ok: 1,
    };
    const r = redactSecrets(o);
    expect(r).toEqual({
      token: REDACTED,
      headers: { Authorization: REDACTED, accept: 'json' },
      auth: { oauth2: { clientSecret: REDACTED, clientId: 'id' } },
      list: [{ password: REDACTED }, 'plain'],
      ok: 1,
    });
    expect(o.token).toBe('t1');
    expect(o.headers.Authorization).toBe('Bearer t2');
    expect(JSON.stringify(r)).not.toMatch(/t[1-4]"/);
  });

  it('keeps an absent secret absent, and redacts inside an error', () => {
    expect(redactSecrets({ token: undefined, password: null })).toEqual({
      token: undefined,
      password: null,
    });
    const err = Object.assign(new Error('boom'), { request: { headers: { cookie: 's=1' } } });
    const r = redactSecrets({ err }) as unknown as { err: Record<string, unknown> };
    expect(r.err).toMatchObject({ message: 'boom', request: { headers: { cookie: REDACTED } } });
    expect(err.request.headers.cookie).toBe('s=1');
  });

  it('stops at a depth limit, so a cycle cannot hang it', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    expect(() => redactSecrets(a)).not.toThrow();
  });
});
