import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../bench/free-port.js';

// The tests and the bench start servers (PostgreSQL, bots' ops servers) on ports freePort gives.
// Those are below the kernel's ephemeral range: a port from listen(0), freed, could go at once
// to another process's outgoing connection, and the server started on it would find it in use.

const RANGE = '/proc/sys/net/ipv4/ip_local_port_range';

describe('freePort', () => {
  it('gives a port below the ephemeral range that a server can listen on', async () => {
    const low = existsSync(RANGE)
      ? Number(readFileSync(RANGE, 'utf8').trim().split(/\s+/)[0])
      : 32_768;
    for (let i = 0; i < 20; i++) {
      const port = await freePort();
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(low);
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
