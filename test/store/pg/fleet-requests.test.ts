import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_PG_MIGRATIONS } from '../../../src/store/pg/fleet-pg-migrations.js';
import { FleetRequests } from '../../../src/store/pg/fleet-requests.js';
import { runPgMigrations } from '../../../src/store/pg/run-pg-migrations.js';
import { pgSkipReason, startPgServer, type PgServer } from '../../support/pg-server.js';

const skipReason = pgSkipReason();

describe.skipIf(skipReason !== undefined)(
  `fleet requests on PostgreSQL${skipReason === undefined ? '' : ` (skipped: ${skipReason})`}`,
  () => {
    let server: PgServer;
    beforeAll(async () => {
      server = await startPgServer();
    }, 120_000);
    afterAll(() => server?.close());

    it('gives each request to one taker, once, oldest first, for the rules it names', async () => {
      const pool = new pg.Pool({ connectionString: await server.freshDatabase(), max: 4 });
      try {
        const client = await pool.connect();
        await runPgMigrations(client, 'fleet', [FLEET_PG_MIGRATIONS]);
        client.release();
        const requests = new FleetRequests(pool, 'fleet');
        await requests.post({ kind: 'retry', ruleId: 'a', commandId: 'lb-1' }, 'm1');
        await requests.post({ kind: 'pause', ruleId: 'a' }, 'm2');
        await requests.post({ kind: 'drop', ruleId: 'b', commandId: 'lb-2' }, 'm1');
        const [one, two] = await Promise.all([requests.take(['a']), requests.take(['a'])]);
        expect([...one, ...two]).toEqual([
          { kind: 'retry', ruleId: 'a', commandId: 'lb-1' },
          { kind: 'pause', ruleId: 'a' },
        ]);
        expect(await requests.take(['a'])).toEqual([]);
        expect(await requests.take([])).toEqual([]);
        expect(await requests.take(['b', 'c'])).toEqual([
          { kind: 'drop', ruleId: 'b', commandId: 'lb-2' },
        ]);

        await requests.setPaused('a', true);
        await requests.setPaused('b', true);
        await requests.setPaused('b', false);
        expect(await requests.paused(['a', 'b', 'c'])).toEqual(['a']);
      } finally {
        await pool.end();
      }
    });
  },
);
