import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgSkipReason, startPgServer, type PgServer } from './pg-server.js';

const skipReason = pgSkipReason();

describe.skipIf(skipReason !== undefined)(
  `the PostgreSQL test server${skipReason === undefined ? '' : ` (skipped: ${skipReason})`}`,
  () => {
    let server: PgServer;
    beforeAll(async () => {
      server = await startPgServer();
    }, 120_000);
    afterAll(() => server?.close());

    it('answers on 127.0.0.1, gives each caller its own database, and comes back after a crash', async () => {
      const a = await server.freshDatabase();
      const b = await server.freshDatabase();
      expect(a).not.toBe(b);
      const client = new pg.Client({ connectionString: a });
      await client.connect();
      await client.query('CREATE TABLE t (n int)');
      await client.query('INSERT INTO t VALUES (1)');
      await client.end();
      server.stop('immediate');
      server.start();
      const again = new pg.Client({ connectionString: a });
      await again.connect();
      const { rows } = await again.query<{ n: number }>('SELECT n FROM t');
      expect(rows).toEqual([{ n: 1 }]);
      const other = new pg.Client({ connectionString: b });
      await other.connect();
      await expect(other.query('SELECT n FROM t')).rejects.toThrow(/does not exist/);
      await other.end();
      await again.end();
    });
  },
);
