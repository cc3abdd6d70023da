import { describe, expect, it } from 'vitest';
import { parseHttpUrl } from '../../src/ledger/parse-http-url.js';

describe('parseHttpUrl', () => {
  it('accepts http and https, and says whether credentials are in the URL', () => {
    const plain = parseHttpUrl('https://participant.example.com:7575/api');
    expect(plain).toMatchObject({ ok: true, hasCredentials: false });
    expect(plain.ok && plain.url.host).toBe('participant.example.com:7575');
    expect(parseHttpUrl('http://user:pw@127.0.0.1:7575')).toMatchObject({
      ok: true,
      hasCredentials: true,
    });
    expect(parseHttpUrl('http://token@127.0.0.1')).toMatchObject({ hasCredentials: true });
  });

  it('names what is wrong otherwise, without throwing', () => {
    expect(parseHttpUrl('participant.example.com')).toEqual({ ok: false, problem: 'not-a-url' });
    expect(parseHttpUrl('')).toEqual({ ok: false, problem: 'not-a-url' });
    expect(parseHttpUrl('ftp://host/x')).toEqual({
      ok: false,
      problem: 'not-http',
      protocol: 'ftp:',
    });
  });
});
