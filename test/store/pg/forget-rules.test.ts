import pg from 'pg';
import { expect, it } from 'vitest';
import { FLEET_PG_MIGRATIONS } from '../../../src/store/pg/fleet-pg-migrations.js';
import { JOURNAL_PG_MIGRATIONS } from '../../../src/store/pg/journal-pg-migrations.js';
import { LeaseStore } from '../../../src/store/pg/lease-store.js';
import { forgetRules, recordRuleOrigins } from '../../../src/store/pg/rule-origins.js';
import { runPgMigrations } from '../../../src/store/pg/run-pg-migrations.js';
import { describeWithPg } from '../../support/describe-with-pg.js';

// A rule a reload removed from the fleet loses its checkpoint row once nobody has it any more,
// so that, added back, it begins where it is added (issue 18), not where it stopped.

const LEASE_MS = 60_000;

describeWithPg('forgetting removed rules on PostgreSQL', (server) => {
  async function migrated(): Promise<pg.Pool> {
    const pool = new pg.Pool({ connectionString: await server().freshDatabase(), max: 4 });
    const client = await pool.connect();
    await runPgMigrations(client, 'fleet', [JOURNAL_PG_MIGRATIONS, FLEET_PG_MIGRATIONS]);
    client.release();
    return pool;
  }

  async function rows(pool: pg.Pool): Promise<Record<string, number>> {
    const { rows: all } = await pool.query<{ owner: string; resume_offset: string }>(
      'SELECT owner, resume_offset FROM fleet.lb_checkpoints ORDER BY owner',
    );
    return Object.fromEntries(all.map((r) => [r.owner, Number(r.resume_offset)]));
  }

  it("deletes a removed rule's row only once no other live member has it and nobody holds its lease; added back, it begins afresh", async () => {
    const pool = await migrated();
    try {
      const leases = new LeaseStore(pool, 'fleet', LEASE_MS);
      const me = { instanceId: 'me-1', name: 'f' };
      const other = { instanceId: 'other-1', name: 'f' };
      await recordRuleOrigins(pool, 'fleet', ['a', 'b', 'c'], 10, { takeDefault: false });
      await leases.heartbeat(me, { hash: 'h1', ids: ['c'] });
      // The other member has not reloaded yet: it still has `a`, and holds `b`'s lease.
      await leases.heartbeat(other, { hash: 'h2', ids: ['a', 'b', 'c'] });
      const [b] = await leases.acquire(other.instanceId, ['b']);
      const forget = (ids: string[]) =>
        forgetRules(pool, 'fleet', ids, { me: me.instanceId, leaseMs: LEASE_MS });
      expect(await forget(['a', 'b'])).toEqual([]);
      expect(await rows(pool)).toEqual({ 'rule:a': 10, 'rule:b': 10, 'rule:c': 10 });

      // It reloads too, and hands `b` on.
      await leases.heartbeat(other, { hash: 'h1', ids: ['c'] });
      expect(await forget(['a', 'b'])).toEqual(['a']);
      await leases.release(other.instanceId, [b!]);
      expect(await forget(['b'])).toEqual(['b']);
      expect(await rows(pool)).toEqual({ 'rule:c': 10 });
      // A rule with no row left is forgotten already; asking again changes nothing.
      expect(await forget(['a'])).toEqual(['a']);

      // A dead member (no heartbeat for a lease period) does not keep a rule.
      await recordRuleOrigins(pool, 'fleet', ['d'], 20, { takeDefault: false });
      await leases.heartbeat(other, { hash: 'h3', ids: ['c', 'd'] });
      await pool.query(
        "UPDATE fleet.lb_fleet_members SET heartbeat_at = now() - interval '2 minutes' WHERE instance_id = $1",
        [other.instanceId],
      );
      expect(await forget(['d'])).toEqual(['d']);

      // Added back by a reload: it begins where it is added, not where it stopped.
      expect(
        await recordRuleOrigins(pool, 'fleet', ['a', 'c'], 90, { takeDefault: false }),
      ).toEqual(['a']);
      expect(await rows(pool)).toEqual({ 'rule:a': 90, 'rule:c': 10 });
    } finally {
      await pool.end();
    }
  });
});
