import pg from 'pg';
import { pgTypes } from '../src/store/pg/load-pg.js';
import { quoteIdentifier } from '../src/store/pg/quote-identifier.js';
import type { ChaosBot } from './chaos-bots.js';

/**
 * `npm run chaos -- --fleet 3`: the replicas are fleet members on one PostgreSQL schema. What the
 * scenario needs beyond the replica pair's: their config, the shared journal's open intents (a
 * member that owns no rule has no stream position to settle on), and who owns which rule at the end.
 */
export const FLEET_SCHEMA = 'chaos_fleet';
export const CHAOS_LEASE_MS = 3_000;

export function fleetConfigLine(): string {
  return `fleet: { name: chaos, leasePeriod: ${CHAOS_LEASE_MS}ms }`;
}

/** The shared journal's intents not terminal (pending or submitted). */
export async function openIntents(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, types: pgTypes(pg) });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int8 AS n FROM ${quoteIdentifier(FLEET_SCHEMA)}.lb_intents WHERE state IN ('pending', 'submitted')`,
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

/** One rule at the end: the live members that run it, and its lease's owner. */
export type RuleOwnership = {
  readonly ruleId: string;
  /** The replicas whose live process runs it (its /status `fleet.running`). */
  readonly runners: readonly string[];
  /** The replica whose instance holds its lease, or `none`, or `not live` (a dead instance). */
  readonly leaseOwner: string;
};

/** Who runs and who holds each rule, read from every live member and the lease table. */
export async function ruleOwnership(
  bots: readonly ChaosBot[],
  url: string,
  ruleIds: readonly string[],
): Promise<RuleOwnership[]> {
  const live = new Map<string, { replica: string; running: readonly string[] }>();
  for (const b of bots) {
    if (!b.running) continue;
    const s = await b.fleetStatus();
    if (s !== undefined) live.set(s.instanceId, { replica: b.name, running: s.running });
  }
  const client = new pg.Client({ connectionString: url, types: pgTypes(pg) });
  client.on('error', () => undefined);
  await client.connect();
  let leases: { rule_id: string; owner: string | null }[];
  try {
    leases = (
      await client.query<{ rule_id: string; owner: string | null }>(
        `SELECT rule_id, owner FROM ${quoteIdentifier(FLEET_SCHEMA)}.lb_fleet_leases`,
      )
    ).rows;
  } finally {
    await client.end();
  }
  return ruleIds.map((ruleId) => {
    const owner = leases.find((l) => l.rule_id === ruleId)?.owner ?? null;
    return {
      ruleId,
      runners: [...live.values()].filter((m) => m.running.includes(ruleId)).map((m) => m.replica),
      leaseOwner: owner === null ? 'none' : (live.get(owner)?.replica ?? 'not live'),
    };
  });
}
