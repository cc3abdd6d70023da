import type { PgMigrationComponent } from './pg-migration.js';

/**
 * The fleet's PostgreSQL schema (component `fleet`): who is in the fleet and who owns which
 * rule. Times are `timestamptz` set by the database's `now()`, never by a member, so the members'
 * clocks do not matter to who owns what.
 * - `lb_fleet_members`: one row per running instance (a restart is a new instance id under the
 *   same name), its heartbeat renewed with its leases; a member is live while its heartbeat is
 *   younger than the lease period. Its rule ids and their hash: members compare hashes each
 *   round and read the ids only of a member whose rules differ (a reload under way).
 * - `lb_fleet_leases`: one row per rule ever owned. `owner` is an instance id, NULL once
 *   released; `generation` grows by one at every change of owner (a take-over, or taking a
 *   released or expired lease), and fences the writes made under the lease before.
 * - `lb_fleet_requests` (2): an operator's action on a rule another member runs (a dead letter's
 *   retry or drop, a pause, a resume), claimed by the rule's owner and deleted once carried out
 *   (`FleetRequests`). `taken_by`, `taken_at` (3): the claim, its member and when (the
 *   database's time); a claim older than the lease period is its taker's that died.
 *   `run-slot` (4): run a schedule rule's slot at or before `slot_at` (epoch ms).
 * - `lb_fleet_rule_control` (2): the rules paused fleet-wide; whoever runs a rule pauses it.
 */
export const FLEET_PG_MIGRATIONS: PgMigrationComponent = {
  name: 'fleet',
  migrations: [
    {
      version: 1,
      sql: `
        CREATE TABLE lb_fleet_members (
          instance_id text PRIMARY KEY,
          name text NOT NULL,
          started_at timestamptz NOT NULL DEFAULT now(),
          heartbeat_at timestamptz NOT NULL DEFAULT now(),
          rules_hash text NOT NULL,
          rule_ids text[] NOT NULL
        );
        CREATE TABLE lb_fleet_leases (
          rule_id text PRIMARY KEY,
          owner text,
          generation bigint NOT NULL,
          expires_at timestamptz NOT NULL,
          acquired_at timestamptz NOT NULL
        );
        CREATE INDEX lb_fleet_leases_owner ON lb_fleet_leases (owner);
      `,
    },
    {
      version: 2,
      sql: `
        CREATE TABLE lb_fleet_requests (
          id bigserial PRIMARY KEY,
          rule_id text NOT NULL,
          kind text NOT NULL CHECK (kind IN ('retry', 'drop', 'pause', 'resume')),
          command_id text,
          requested_at timestamptz NOT NULL DEFAULT now(),
          requested_by text NOT NULL
        );
        CREATE INDEX lb_fleet_requests_rule ON lb_fleet_requests (rule_id);
        CREATE TABLE lb_fleet_rule_control (
          rule_id text PRIMARY KEY,
          paused boolean NOT NULL,
          changed_at timestamptz NOT NULL DEFAULT now()
        );
      `,
    },
    {
      version: 3,
      sql: `
        ALTER TABLE lb_fleet_requests ADD COLUMN taken_by text, ADD COLUMN taken_at timestamptz;
      `,
    },
    {
      version: 4,
      sql: `
        ALTER TABLE lb_fleet_requests
          DROP CONSTRAINT lb_fleet_requests_kind_check,
          ADD CONSTRAINT lb_fleet_requests_kind_check
            CHECK (kind IN ('retry', 'drop', 'pause', 'resume', 'run-slot')),
          ADD COLUMN slot_at bigint,
          ADD CONSTRAINT lb_fleet_requests_slot_at_check
            CHECK ((kind = 'run-slot') = (slot_at IS NOT NULL));
      `,
    },
  ],
};
