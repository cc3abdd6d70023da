import type pg from 'pg';
import { ruleCheckpointOwner } from './load-pg-journal.js';
import { quoteIdentifier } from './quote-identifier.js';

/**
 * Records where a fleet's rules begin: a `rule:<id>` checkpoint row at `offset` for each of
 * `ruleIds` that has none yet (the first member that knows a rule records it; a row already
 * there, written by a member or by the rule's owner, is left as it is). With `takeDefault`, a
 * single bot's checkpoint ('default'), when the schema has one, is taken instead of `offset`: a
 * fleet that follows one bot on the same schema goes on from where that bot was. Returns the
 * rules recorded now. One statement, not fenced: it only inserts rows nobody has written, and a
 * member asks for a rule's lease only once its row is there.
 */
export async function recordRuleOrigins(
  pool: pg.Pool | pg.ClientBase,
  schema: string,
  ruleIds: readonly string[],
  offset: number,
  options: { readonly takeDefault: boolean },
): Promise<string[]> {
  if (ruleIds.length === 0) return [];
  const s = quoteIdentifier(schema);
  const { rows } = await pool.query<{ owner: string }>(
    `INSERT INTO ${s}.lb_checkpoints (owner, resume_offset, processed_offset)
     SELECT o.owner,
            CASE WHEN d.resume_offset IS NULL THEN $2::bigint ELSE d.resume_offset END,
            CASE WHEN d.resume_offset IS NULL THEN $2::bigint
                 ELSE coalesce(d.processed_offset, d.resume_offset) END
       FROM unnest($1::text[]) AS o(owner)
       LEFT JOIN ${s}.lb_checkpoints d ON d.owner = 'default' AND $3
     ON CONFLICT (owner) DO NOTHING
     RETURNING owner`,
    [ruleIds.map(ruleCheckpointOwner), offset, options.takeDefault],
  );
  const recorded = new Set(rows.map((r) => r.owner));
  return ruleIds.filter((id) => recorded.has(ruleCheckpointOwner(id)));
}

/**
 * Forgets rules a reload removed from the fleet: deletes the `rule:<id>` checkpoint row of each
 * of `ruleIds` that no other live member has in its rules (`lb_fleet_members.rule_ids`) and
 * whose lease nobody holds (a row is written only under a held lease: the fence), so a rule
 * added back later begins where it is added (`recordRuleOrigins`), as on a single bot, instead
 * of replaying from where it stopped. Returns those forgotten (row deleted, or none there); the
 * others are still run or known elsewhere: ask again later. The lease rows stay: a lease's
 * generation only grows, which the fence relies on.
 */
export async function forgetRules(
  pool: pg.Pool | pg.ClientBase,
  schema: string,
  ruleIds: readonly string[],
  options: { readonly me: string; readonly leaseMs: number },
): Promise<string[]> {
  if (ruleIds.length === 0) return [];
  const s = quoteIdentifier(schema);
  const { rows } = await pool.query<{ rule_id: string }>(
    `WITH gone AS (
       SELECT r.rule_id, r.owner FROM unnest($1::text[], $2::text[]) AS r(rule_id, owner)
        WHERE NOT EXISTS (
                SELECT 1 FROM ${s}.lb_fleet_members m
                 WHERE m.instance_id <> $3
                   AND m.heartbeat_at > now() - $4 * interval '1 millisecond'
                   AND r.rule_id = ANY(m.rule_ids))
          AND NOT EXISTS (
                SELECT 1 FROM ${s}.lb_fleet_leases l
                 WHERE l.rule_id = r.rule_id AND l.owner IS NOT NULL AND l.expires_at > now())
     ), deleted AS (
       DELETE FROM ${s}.lb_checkpoints c USING gone WHERE c.owner = gone.owner
     )
     SELECT rule_id FROM gone`,
    [[...ruleIds], ruleIds.map(ruleCheckpointOwner), options.me, options.leaseMs],
  );
  return rows.map((r) => r.rule_id);
}

/**
 * Each rule's own checkpoint: its `rule:<id>` row's resume offset, or for a rule without a row
 * the single bot's ('default'), as the store loads them. A rule with neither is left out.
 */
export async function readRuleCheckpoints(
  pool: pg.Pool | pg.ClientBase,
  schema: string,
  ruleIds: readonly string[],
): Promise<Map<string, number>> {
  if (ruleIds.length === 0) return new Map();
  const s = quoteIdentifier(schema);
  const { rows } = await pool.query<{ rule_id: string; resume_offset: string | number }>(
    `SELECT o.rule_id, coalesce(r.resume_offset, d.resume_offset) AS resume_offset
       FROM unnest($1::text[], $2::text[]) AS o(rule_id, owner)
       LEFT JOIN ${s}.lb_checkpoints r ON r.owner = o.owner
       LEFT JOIN ${s}.lb_checkpoints d ON d.owner = 'default'
      WHERE coalesce(r.resume_offset, d.resume_offset) IS NOT NULL`,
    [[...ruleIds], ruleIds.map(ruleCheckpointOwner)],
  );
  return new Map(rows.map((r) => [r.rule_id, Number(r.resume_offset)]));
}
