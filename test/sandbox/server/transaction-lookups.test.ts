import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { call, startTestSandbox } from './sandbox-fixture.js';

let sb: Sandbox;

beforeAll(async () => {
  sb = await startTestSandbox();
});

afterAll(async () => {
  await sb.stop();
});

async function cause(path: string, body: unknown): Promise<string> {
  const r = await call(sb, 'POST', path, body);
  expect(r.status, r.text).toBe(400);
  return (r.body as { cause: string }).cause;
}

describe('transaction lookups by id and by offset', () => {
  it('update-by-*: refuse a request without updateFormat, after checking the key', async () => {
    for (const [path, key] of [
      ['/v2/updates/update-by-id', { updateId: 'x' }],
      ['/v2/updates/update-by-offset', { offset: 1 }],
    ] as const) {
      expect(await cause(path, key)).toContain('missing a mandatory field: update_format');
    }
    expect(await cause('/v2/updates/update-by-offset', {})).not.toContain('update_format');
  });

  it('the deprecated transaction-by-*: refuse a request with neither parties nor format', async () => {
    for (const [path, key] of [
      ['/v2/updates/transaction-by-id', { updateId: 'x' }],
      ['/v2/updates/transaction-by-offset', { offset: 1 }],
    ] as const) {
      expect(await cause(path, key)).toContain('missing a mandatory field: requesting_parties');
    }
  });

  it('answer an unknown id with UPDATE_NOT_FOUND', async () => {
    const parties = [sb.parties.Alice!];
    const legacy = await call(sb, 'POST', '/v2/updates/transaction-by-id', {
      updateId: 'nope',
      requestingParties: parties,
    });
    expect(legacy.status).toBe(404);
    expect((legacy.body as { code: string }).code).toBe('UPDATE_NOT_FOUND');
  });
});
