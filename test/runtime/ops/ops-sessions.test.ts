import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/fake-clock.js';
import {
  crossOriginReason,
  isLoopbackHost,
  MAX_SESSIONS,
  opsSessions,
  SESSION_IDLE_MS,
  sessionCookie,
} from '../../../src/runtime/ops/ops-sessions.js';
import { GUESS_BURST, GUESS_REFILL_MS } from '../../../src/runtime/ops/guess-limiter.js';

const TOKEN = 's3cret-ops-token';

function req(headers: Record<string, string>): IncomingMessage {
  return { headers } as unknown as IncomingMessage;
}

const withCookie = (id: string): IncomingMessage =>
  req({ cookie: `other=1; ledgerbot_session=${id}` });

describe('ops sessions', () => {
  it('refuses to check tokens from an address that sent too many wrong ones (429, Retry-After)', () => {
    const clock = new FakeClock();
    const s = opsSessions(TOKEN, clock);
    const from = (address: string, headers: Record<string, string>): IncomingMessage =>
      ({ headers, socket: { remoteAddress: address } }) as unknown as IncomingMessage;
    for (let i = 0; i < GUESS_BURST - 1; i++) {
      expect(s.credentialOf(from('10.1.1.1', { authorization: `Bearer guess-${i}` }))).toBe('none');
    }
    expect(s.login('last-guess', '10.1.1.1')).toBeUndefined();
    // Now even the right token is not checked from there, by header or by sign-in.
    const refused = { status: 429, code: 'TOO_MANY_GUESSES' };
    expect(() => s.credentialOf(from('10.1.1.1', { authorization: `Bearer ${TOKEN}` }))).toThrow(
      expect.objectContaining(refused),
    );
    expect(() => s.login(TOKEN, '10.1.1.1')).toThrow(expect.objectContaining(refused));
    try {
      s.login(TOKEN, '10.1.1.1');
    } catch (err) {
      expect((err as { headers: Record<string, string> }).headers).toEqual({ 'retry-after': '6' });
      expect((err as Error).message).not.toContain(TOKEN);
    }
    // Other addresses, and a session already open, are not affected.
    expect(s.credentialOf(from('10.1.1.2', { authorization: `Bearer ${TOKEN}` }))).toBe('bearer');
    const id = s.login(TOKEN, '10.1.1.2')!;
    expect(s.credentialOf(from('10.1.1.1', { cookie: `ledgerbot_session=${id}` }))).toBe('cookie');
    clock.set(clock.now() + GUESS_REFILL_MS);
    expect(s.credentialOf(from('10.1.1.1', { authorization: `Bearer ${TOKEN}` }))).toBe('bearer');
  });

  it('without a token everything is open and a login makes no session', () => {
    const s = opsSessions(undefined, new FakeClock());
    expect(s.authRequired).toBe(false);
    expect(s.credentialOf(req({}))).toBe('open');
    expect(s.login('anything')).toBeUndefined();
  });

  it('takes the bearer token, or a live session cookie; never the token as a cookie', () => {
    const s = opsSessions(TOKEN, new FakeClock());
    expect(s.credentialOf(req({ authorization: `Bearer ${TOKEN}` }))).toBe('bearer');
    expect(s.credentialOf(req({ authorization: `bearer  ${TOKEN} ` }))).toBe('bearer');
    expect(s.credentialOf(req({ authorization: `Bearer ${TOKEN}x` }))).toBe('none');
    expect(s.credentialOf(req({ authorization: TOKEN }))).toBe('none');
    expect(s.credentialOf(withCookie(TOKEN))).toBe('none');
    expect(s.login('wrong')).toBeUndefined();
    const id = s.login(TOKEN)!;
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(id).not.toContain(TOKEN);
    expect(s.credentialOf(withCookie(id))).toBe('cookie');
    expect(s.credentialOf(withCookie(`${id}x`))).toBe('none');
    expect(s.login(TOKEN)).not.toBe(id);
    s.logout(withCookie(id));
    expect(s.credentialOf(withCookie(id))).toBe('none');
  });

  it('ends a session unused for 12 hours; use keeps it alive', () => {
    const clock = new FakeClock();
    const s = opsSessions(TOKEN, clock);
    const used = s.login(TOKEN)!;
    const idle = s.login(TOKEN)!;
    clock.set(clock.now() + SESSION_IDLE_MS - 1);
    expect(s.credentialOf(withCookie(used))).toBe('cookie');
    clock.set(clock.now() + 2);
    expect(s.credentialOf(withCookie(idle))).toBe('none');
    expect(s.credentialOf(withCookie(used))).toBe('cookie');
  });

  it(`keeps at most ${MAX_SESSIONS}: a login beyond drops the least recently used`, () => {
    const clock = new FakeClock();
    const s = opsSessions(TOKEN, clock);
    const ids = Array.from({ length: MAX_SESSIONS }, () => {
      clock.set(clock.now() + 1);
      return s.login(TOKEN)!;
    });
    // The first is used again: the second is now the least recently used.
    expect(s.credentialOf(withCookie(ids[0]!))).toBe('cookie');
    const newest = s.login(TOKEN)!;
    expect(s.credentialOf(withCookie(newest))).toBe('cookie');
    expect(s.credentialOf(withCookie(ids[1]!))).toBe('none');
    expect(s.credentialOf(withCookie(ids[0]!))).toBe('cookie');
    expect(s.credentialOf(withCookie(ids[2]!))).toBe('cookie');
  });

  it('writes the cookie HttpOnly, SameSite=Strict, for the whole server, and clears it', () => {
    expect(sessionCookie('abc')).toBe('ledgerbot_session=abc; HttpOnly; SameSite=Strict; Path=/');
    expect(sessionCookie('abc', true)).toBe(
      'ledgerbot_session=abc; HttpOnly; SameSite=Strict; Path=/; Secure',
    );
    expect(sessionCookie(undefined)).toBe(
      'ledgerbot_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0',
    );
  });
});

describe('cross-site refusals', () => {
  const host = '127.0.0.1:9464';
  it('refuses another Origin, and a cookie change that says nothing of where it comes from', () => {
    expect(crossOriginReason(req({ host, origin: `http://${host}` }), 'cookie')).toBeUndefined();
    expect(crossOriginReason(req({ host, origin: 'http://evil.example' }), 'bearer')).toMatch(
      /evil\.example/,
    );
    expect(crossOriginReason(req({ host, origin: 'null' }), 'open')).toBeDefined();
    // Behind a proxy that terminates TLS the page's origin is https, with the same host.
    expect(crossOriginReason(req({ host, origin: `https://${host}` }), 'cookie')).toBeUndefined();
    expect(crossOriginReason(req({ host, origin: `ftp://${host}` }), 'cookie')).toBeDefined();
    expect(crossOriginReason(req({ host, origin: `http://${host}/x` }), 'cookie')).toBeDefined();
    expect(crossOriginReason(req({ host, origin: 'not a url' }), 'cookie')).toBeDefined();
    expect(
      crossOriginReason(req({ host, origin: 'http://127.0.0.1:9465' }), 'cookie'),
    ).toBeDefined();
    // A proxy that rewrites the Host: the page's host must be one of http.allowedHosts.
    const allowed = new Set(['console.example.com']);
    const proxied = { host, origin: 'https://console.example.com' };
    expect(crossOriginReason(req(proxied), 'cookie', allowed)).toBeUndefined();
    expect(crossOriginReason(req(proxied), 'cookie')).toBeDefined();
    expect(
      crossOriginReason(req({ host, origin: 'https://evil.example' }), 'cookie', allowed),
    ).toBeDefined();
    expect(crossOriginReason(req({ host }), 'cookie')).toBeDefined();
    expect(
      crossOriginReason(req({ host, 'sec-fetch-site': 'same-origin' }), 'cookie'),
    ).toBeUndefined();
    expect(
      crossOriginReason(req({ host, 'sec-fetch-site': 'cross-site' }), 'cookie'),
    ).toBeDefined();
    expect(crossOriginReason(req({ host }), 'bearer')).toBeUndefined();
    expect(crossOriginReason(req({ host }), 'open')).toBeUndefined();
  });

  it('knows the loopback names (DNS rebinding sends another)', () => {
    for (const h of ['127.0.0.1:9464', 'localhost:80', 'localhost', '[::1]:9464', '127.1.2.3']) {
      expect(isLoopbackHost(h), h).toBe(true);
    }
    for (const h of ['evil.example:9464', '10.0.0.1:9464', 'localhost.evil.example', undefined]) {
      expect(isLoopbackHost(h), String(h)).toBe(false);
    }
  });
});
