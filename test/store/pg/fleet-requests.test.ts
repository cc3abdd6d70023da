import { readFileSync } from 'node:fs';
import pg from 'pg';
import { expect, it } from 'vitest';
import { FLEET_PG_MIGRATIONS } from '../../../src/store/pg/fleet-pg-migrations.js';
import { FleetRequests } from '../../../src/store/pg/fleet-requests.js';
import { runPgMigrations } from '../../../src/store/pg/run-pg-migrations.js';
import { describeWithPg } from '../../support/describe-with-pg.js';

const V2_FIXTURE = new URL('./fixtures/fleet-v2.sql', import.meta.url);
/** The claim's period (a lease period); the tests age claims in the table instead of waiting. */
const CLAIM_MS = 60_000;

describeWithPg('fleet requests on PostgreSQL', (server) => {
  async function migrated(): Promise<pg.Pool> {
    const pool = new pg.Pool({ connectionString: await server().freshDatabase(), max: 4 });
    const client = await pool.connect();
    await runPgMigrations(client, 'fleet', [FLEET_PG_MIGRATIONS]);
    client.release();
    return pool;
  }

  it('gives each request to one taker, oldest first, for the rules it names; done deletes it', async () => {
    const pool = await migrated();
    try {
      const requests = new FleetRequests(pool, 'fleet', CLAIM_MS);
      await requests.post({ kind: 'retry', ruleId: 'a', commandId: 'lb-1' }, 'm1');
      await requests.post({ kind: 'pause', ruleId: 'a' }, 'm2');
      await requests.post({ kind: 'drop', ruleId: 'b', commandId: 'lb-2' }, 'm1');
      await requests.post({ kind: 'run-slot', ruleId: 'c', at: 1_767_225_600_000 }, 'm2');
      const [one, two] = await Promise.all([
        requests.take(['a'], 'm1'),
        requests.take(['a'], 'm2'),
      ]);
      const both = [...one, ...two];
      expect(both.map((c) => c.request)).toEqual([
        { kind: 'retry', ruleId: 'a', commandId: 'lb-1' },
        { kind: 'pause', ruleId: 'a' },
      ]);
      expect(both.map((c) => c.again)).toEqual([false, false]);
      // Claimed by a live member: nobody else takes them.
      const taker = one.length > 0 ? 'm1' : 'm2';
      expect(await requests.take(['a'], 'm3')).toEqual([]);
      expect(await requests.take([], 'm3')).toEqual([]);
      const b = await requests.take(['b', 'c'], 'm3');
      expect(b.map((c) => c.request)).toEqual([
        { kind: 'drop', ruleId: 'b', commandId: 'lb-2' },
        { kind: 'run-slot', ruleId: 'c', at: 1_767_225_600_000 },
      ]);
      await requests.done(b.map((c) => c.id));
      await requests.done([]);
      // The taker's next round takes again what it did not finish (marked as taken before).
      const mineAgain = await requests.take(['a', 'b'], taker);
      expect(mineAgain.map((c) => [c.request.kind, c.again])).toEqual([
        ['retry', true],
        ['pause', true],
      ]);
      await requests.done(mineAgain.map((c) => c.id));
      expect(await requests.take(['a', 'b'], taker)).toEqual([]);
      const { rows } = await pool.query('SELECT count(*)::int AS n FROM fleet.lb_fleet_requests');
      expect(rows[0]).toEqual({ n: 0 });
      // A slot run names its slot time, and only a slot run does.
      await expect(
        pool.query(
          `INSERT INTO fleet.lb_fleet_requests (rule_id, kind, requested_by) VALUES ('c', 'run-slot', 'm1')`,
        ),
      ).rejects.toThrow(/lb_fleet_requests_slot_at_check/);
      await expect(
        pool.query(
          `INSERT INTO fleet.lb_fleet_requests (rule_id, kind, slot_at, requested_by) VALUES ('c', 'pause', 1, 'm1')`,
        ),
      ).rejects.toThrow(/lb_fleet_requests_slot_at_check/);

      await requests.setPaused('a', true);
      await requests.setPaused('b', true);
      await requests.setPaused('b', false);
      expect(await requests.paused(['a', 'b', 'c'])).toEqual(['a']);
    } finally {
      await pool.end();
    }
  });

  it("carries out a request whose taker died before it was done: the claim frees after a lease period, for the rule's next owner", async () => {
    const pool = await migrated();
    try {
      const requests = new FleetRequests(pool, 'fleet', CLAIM_MS);
      await requests.post({ kind: 'retry', ruleId: 'a', commandId: 'lb-1' }, 'm2');
      const [claimed] = await requests.take(['a'], 'dead');
      expect(claimed!.again).toBe(false);
      // The taker dies here. Within the claim's period the next owner leaves it alone.
      expect(await requests.take(['a'], 'next')).toEqual([]);
      await pool.query(
        `UPDATE fleet.lb_fleet_requests SET taken_at = now() - interval '61 seconds'`,
      );
      const retaken = await requests.take(['a'], 'next');
      expect(retaken).toEqual([
        {
          id: claimed!.id,
          again: true,
          request: { kind: 'retry', ruleId: 'a', commandId: 'lb-1' },
        },
      ]);
      const { rows } = await pool.query<{ taken_by: string; age: number }>(
        `SELECT taken_by, extract(epoch FROM now() - taken_at)::float AS age FROM fleet.lb_fleet_requests`,
      );
      expect(rows[0]!.taken_by).toBe('next');
      expect(rows[0]!.age).toBeLessThan(60);
      await requests.done([claimed!.id]);
      expect(await requests.take(['a'], 'next')).toEqual([]);
    } finally {
      await pool.end();
    }
  });

  it('upgrades a fleet schema of version 2, its requests kept and taken as claims', async () => {
    const pool = new pg.Pool({ connectionString: await server().freshDatabase(), max: 2 });
    try {
      const client = await pool.connect();
      await client.query(readFileSync(V2_FIXTURE, 'utf8'));
      await client.query('RESET search_path');
      expect(await runPgMigrations(client, 'lb_fleet_v2', [FLEET_PG_MIGRATIONS])).toEqual({
        fleet: { from: 2, to: 4 },
      });
      client.release();
      const requests = new FleetRequests(pool, 'lb_fleet_v2', CLAIM_MS);
      const taken = await requests.take(['accept', 'remind'], 'host-3-cccccc');
      expect(taken.map((c) => [c.request, c.again])).toEqual([
        [{ kind: 'retry', ruleId: 'accept', commandId: 'lb-accept-1' }, false],
        [{ kind: 'pause', ruleId: 'remind' }, false],
      ]);
      await requests.done(taken.map((c) => c.id));
      expect(await requests.take(['accept', 'remind'], 'host-3-cccccc')).toEqual([]);
      expect(await requests.paused(['accept', 'remind'])).toEqual(['remind']);
    } finally {
      await pool.end();
    }
  });
});
