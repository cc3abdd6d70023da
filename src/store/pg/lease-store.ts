import type { Pool } from 'pg';
import { StoreError } from '../store-error.js';
import type { LeaseHold } from './commit-fence.js';
import { checkSchemaName, quoteIdentifier } from './quote-identifier.js';

/** A fleet member: a running instance (its id is new at every start) and its name. */
export type FleetMemberId = { readonly instanceId: string; readonly name: string };

/** A member as `lb_fleet_members` has it; `live` by the database's clock. */
export type FleetMemberRow = FleetMemberId & {
  readonly startedAt: number;
  readonly heartbeatAt: number;
  readonly live: boolean;
  /** See `FleetRules`. */
  readonly rulesHash: string;
};

/**
 * The rules a member runs: a hash of their ids to compare cheaply, and the ids themselves, sent
 * only when the database may not have them yet (the first heartbeat, and after a change).
 */
export type FleetRules = { readonly hash: string; readonly ids?: readonly string[] };

/** Who owns a rule (for `/status` and the keepers); `expired` by the database's clock. */
export type LeaseRow = {
  readonly ruleId: string;
  /** The owner's instance id, or null once released. */
  readonly owner: string | null;
  /** The owner's name while it is a member. */
  readonly ownerName: string | null;
  readonly generation: number;
  readonly expiresAt: number;
  readonly acquiredAt: number;
  readonly expired: boolean;
};

/** A dead member's row is deleted this many lease periods after its last heartbeat. */
const FORGET_MEMBER_AFTER_LEASES = 10;

/**
 * The fleet's leases in PostgreSQL (the `fleet` component's tables, `FLEET_PG_MIGRATIONS`). Every
 * time is the database's `now()`: a lease expires `leaseMs` after the statement that took or
 * renewed it, whatever the members' clocks say. Each operation is one statement for any number
 * of rules, so a member's renewal costs one round trip however many rules it owns.
 */
export class LeaseStore {
  readonly #pool: Pick<Pool, 'query'>;
  readonly #members: string;
  readonly #leases: string;
  readonly #leaseMs: number;

  constructor(pool: Pick<Pool, 'query'>, schema: string, leaseMs: number) {
    if (!Number.isInteger(leaseMs) || leaseMs < 30) {
      throw new StoreError(
        'STORE_BAD_ARGUMENT',
        `the lease period must be a whole number of milliseconds, at least 30; got ${leaseMs}`,
      );
    }
    const q = quoteIdentifier(checkSchemaName(schema));
    this.#pool = pool;
    this.#members = `${q}.lb_fleet_members`;
    this.#leases = `${q}.lb_fleet_leases`;
    this.#leaseMs = leaseMs;
  }

  get leaseMs(): number {
    return this.#leaseMs;
  }

  /**
   * Says `me` is alive (joining the fleet the first time) and runs `rules`, and forgets
   * long-dead members. The rule ids are written only when `publishIds` (the hash changed since
   * the last heartbeat), or when the row is missing: a member forgotten while it was paused joins
   * again with them. (An upsert cannot leave them out: PostgreSQL checks the NOT NULL column of
   * the row to insert before it finds the conflict.)
   */
  async heartbeat(
    me: FleetMemberId,
    rules: FleetRules & { readonly ids: readonly string[] },
    publishIds = true,
  ): Promise<void> {
    const beat = publishIds
      ? undefined
      : await this.#pool.query(
          `UPDATE ${this.#members} SET heartbeat_at = now(), rules_hash = $2
            WHERE instance_id = $1`,
          [me.instanceId, rules.hash],
        );
    if (beat === undefined || beat.rowCount === 0) {
      await this.#pool.query(
        `INSERT INTO ${this.#members} (instance_id, name, rules_hash, rule_ids)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (instance_id) DO UPDATE SET heartbeat_at = now(),
           rules_hash = EXCLUDED.rules_hash, rule_ids = EXCLUDED.rule_ids`,
        [me.instanceId, me.name, rules.hash, [...rules.ids]],
      );
    }
    await this.#pool.query(
      `DELETE FROM ${this.#members} WHERE heartbeat_at < now() - $1 * interval '1 millisecond'`,
      [this.#leaseMs * FORGET_MEMBER_AFTER_LEASES],
    );
  }

  /** `instanceId` leaves the fleet (its leases are released separately). */
  async leave(instanceId: string): Promise<void> {
    await this.#pool.query(`DELETE FROM ${this.#members} WHERE instance_id = $1`, [instanceId]);
  }

  async members(): Promise<FleetMemberRow[]> {
    const { rows } = await this.#pool.query<{
      instance_id: string;
      name: string;
      started_at: Date;
      heartbeat_at: Date;
      live: boolean;
      rules_hash: string;
    }>(
      `SELECT instance_id, name, started_at, heartbeat_at, rules_hash,
              heartbeat_at > now() - $1 * interval '1 millisecond' AS live
         FROM ${this.#members} ORDER BY name, instance_id`,
      [this.#leaseMs],
    );
    return rows.map((r) => ({
      instanceId: r.instance_id,
      name: r.name,
      startedAt: r.started_at.getTime(),
      heartbeatAt: r.heartbeat_at.getTime(),
      live: r.live,
      rulesHash: r.rules_hash,
    }));
  }

  /** The rule ids of these members (those whose hash differs from this member's). */
  async ruleIdsOf(instanceIds: readonly string[]): Promise<Map<string, Set<string>>> {
    if (instanceIds.length === 0) return new Map();
    const { rows } = await this.#pool.query<{ instance_id: string; rule_ids: string[] }>(
      `SELECT instance_id, rule_ids FROM ${this.#members} WHERE instance_id = ANY($1::text[])`,
      [[...instanceIds]],
    );
    return new Map(rows.map((r) => [r.instance_id, new Set(r.rule_ids)]));
  }

  /** Every lease, by rule id. */
  async leases(): Promise<LeaseRow[]> {
    const { rows } = await this.#pool.query<{
      rule_id: string;
      owner: string | null;
      name: string | null;
      generation: string;
      expires_at: Date;
      acquired_at: Date;
      expired: boolean;
    }>(
      `SELECT l.rule_id, l.owner, m.name, l.generation, l.expires_at, l.acquired_at,
              l.owner IS NULL OR l.expires_at <= now() AS expired
         FROM ${this.#leases} l LEFT JOIN ${this.#members} m ON m.instance_id = l.owner
        ORDER BY l.rule_id`,
    );
    return rows.map((r) => ({
      ruleId: r.rule_id,
      owner: r.owner,
      ownerName: r.name,
      generation: Number(r.generation),
      expiresAt: r.expires_at.getTime(),
      acquiredAt: r.acquired_at.getTime(),
      expired: r.expired,
    }));
  }

  /**
   * Takes for `instanceId` those of `ruleIds` whose lease is free: never taken, released, or
   * expired (its owner stopped renewing). Each taken lease gets the next generation. Returns
   * what it took; a lease another instance holds is left.
   */
  async acquire(instanceId: string, ruleIds: readonly string[]): Promise<LeaseHold[]> {
    if (ruleIds.length === 0) return [];
    // A row lock orders two members racing for one rule: the second re-reads the row the first
    // committed, finds it held, and takes nothing.
    const { rows } = await this.#pool.query<{ rule_id: string; generation: string }>(
      `INSERT INTO ${this.#leases} AS l (rule_id, owner, generation, expires_at, acquired_at)
       SELECT r, $2, 1, now() + $3 * interval '1 millisecond', now() FROM unnest($1::text[]) AS r
       ON CONFLICT (rule_id) DO UPDATE
         SET owner = EXCLUDED.owner, generation = l.generation + 1,
             expires_at = EXCLUDED.expires_at, acquired_at = EXCLUDED.acquired_at
         WHERE l.owner IS NULL OR l.expires_at <= now()
       RETURNING l.rule_id, l.generation`,
      [[...new Set(ruleIds)], instanceId, this.#leaseMs],
    );
    return rows.map((r) => ({ ruleId: r.rule_id, generation: Number(r.generation) }));
  }

  /**
   * Extends the leases `instanceId` still holds at their generation; returns those it does not
   * hold any more (lost: taken over after they expired, or released). A lease past its expiry
   * that nobody took yet is renewed: nobody wrote under another generation meanwhile.
   */
  async renew(instanceId: string, holds: readonly LeaseHold[]): Promise<LeaseHold[]> {
    if (holds.length === 0) return [];
    const { rows } = await this.#pool.query<{ rule_id: string }>(
      `UPDATE ${this.#leases} AS l SET expires_at = now() + $4 * interval '1 millisecond'
         FROM unnest($1::text[], $2::bigint[]) AS h(rule_id, generation)
        WHERE l.rule_id = h.rule_id AND l.generation = h.generation AND l.owner = $3
       RETURNING l.rule_id`,
      [holds.map((h) => h.ruleId), holds.map((h) => h.generation), instanceId, this.#leaseMs],
    );
    const renewed = new Set(rows.map((r) => r.rule_id));
    return holds.filter((h) => !renewed.has(h.ruleId));
  }

  /**
   * Gives up leases `instanceId` holds at their generation, at once (a clean stop, or rules
   * handed to another member); the generation stays, the next taker adds one. Returns those it
   * released.
   */
  async release(instanceId: string, holds: readonly LeaseHold[]): Promise<LeaseHold[]> {
    if (holds.length === 0) return [];
    const { rows } = await this.#pool.query<{ rule_id: string; generation: string }>(
      `UPDATE ${this.#leases} AS l SET owner = NULL, expires_at = now()
         FROM unnest($1::text[], $2::bigint[]) AS h(rule_id, generation)
        WHERE l.rule_id = h.rule_id AND l.generation = h.generation AND l.owner = $3
       RETURNING l.rule_id, l.generation`,
      [holds.map((h) => h.ruleId), holds.map((h) => h.generation), instanceId],
    );
    return rows.map((r) => ({ ruleId: r.rule_id, generation: Number(r.generation) }));
  }
}
