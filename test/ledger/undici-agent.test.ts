/**
 * The client's Agent comes from undici's own files, not its index (src/ledger/undici-agent.ts):
 * it must be undici's Agent, able to make a request, without the index having been loaded. This
 * test file runs in a process of its own (Vitest's forks pool), so nothing loaded the index first.
 */
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../src/ledger/undici-agent.js';

const require = createRequire(import.meta.url);
const server = createServer((_req, res) => res.end('{"ok":true}'));
let origin = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('the Agent of the ledger client', () => {
  it('makes a request without loading undici’s index, and is the index’s Agent', async () => {
    const index = require.resolve('undici');
    expect(require.cache[index]).toBeUndefined();
    const agent = new Agent({ keepAliveTimeout: 1_000 });
    try {
      const res = await agent.request({ origin, path: '/', method: 'GET' });
      expect(res.statusCode).toBe(200);
      expect(await res.body.json()).toEqual({ ok: true });
    } finally {
      await agent.close();
    }
    expect(require.cache[index]).toBeUndefined();
    const undici = (await import('undici')) as { Agent: unknown };
    expect(Agent).toBe(undici.Agent);
  });
});
