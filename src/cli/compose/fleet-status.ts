import type { FleetConfig } from '../../runtime/config/bot-config.js';
import type { LeaseStore } from '../../store/pg/lease-store.js';

/** What a member knows of itself when `/status` asks (see `fleetStatus`). */
export type FleetStatusSelf = {
  readonly fleet: FleetConfig;
  readonly instanceId: string;
  /** The rules this member's bot runs now (empty while that bot starts). */
  readonly running: ReadonlySet<string>;
  /** The rules of this member's bot while it starts (empty once it runs). */
  readonly starting: ReadonlySet<string>;
  /** Every rule of this member's rule files. */
  readonly ruleIds: readonly string[];
};

/** The fleet part of `/status`: the members, who owns which rule, and what this member runs. */
export async function fleetStatus(
  leases: Pick<LeaseStore, 'members' | 'leases'>,
  self: FleetStatusSelf,
): Promise<Record<string, unknown>> {
  const [members, rows] = await Promise.all([leases.members(), leases.leases()]);
  return {
    name: self.fleet.name,
    instanceId: self.instanceId,
    leasePeriodMs: self.fleet.leasePeriodMs,
    running: [...self.running].sort(),
    starting: [...self.starting].sort(),
    members: members.map((m) => ({
      instanceId: m.instanceId,
      name: m.name,
      live: m.live,
      self: m.instanceId === self.instanceId,
      startedAt: new Date(m.startedAt).toISOString(),
      heartbeatAt: new Date(m.heartbeatAt).toISOString(),
      rules: rows.filter((l) => l.owner === m.instanceId && !l.expired).length,
    })),
    // A free lease of a rule this member does not have is a removed rule's (reloaded away).
    owners: rows
      .filter((l) => !l.expired || self.ruleIds.includes(l.ruleId))
      .map((l) => ({
        ruleId: l.ruleId,
        owner: l.expired ? null : l.owner,
        generation: l.generation,
        expired: l.expired,
      })),
  };
}
