import { parseDuration } from '../../core/duration.js';
import type { ConfigCheckContext } from './config-problem-list.js';
import type { RawBotConfig } from './raw-bot-config.js';

/** Shorter leases make rounds (every third) race a busy database; longer hold a dead member's rules. */
const MIN_LEASE_MS = 300;
const MAX_LEASE_MS = 3_600_000;

/**
 * The checks of `fleet` the schema cannot express: a fleet shares its rules through the leases
 * in PostgreSQL, so it needs `state.postgres`, and one participant (`ledger.url`, not an
 * embedded sandbox per member); the lease period within bounds.
 */
export function checkFleet(raw: RawBotConfig, { at, problems }: ConfigCheckContext): void {
  const fleet = raw.fleet;
  if (fleet === undefined) return;
  if (raw.state.postgres === undefined) {
    problems.add(
      at.pos(['fleet'], { key: true }),
      ['fleet'],
      'FLEET_NEEDS_POSTGRES',
      '`fleet` needs `state.postgres`: the members share the rules through leases in PostgreSQL',
      'add `state.postgres` (the same url and schema on every member), or remove `fleet`',
    );
  }
  if (raw.ledger.embedded !== undefined) {
    problems.add(
      at.pos(['fleet'], { key: true }),
      ['fleet'],
      'FLEET_NEEDS_POSTGRES',
      '`fleet` needs a shared participant (`ledger.url`): each member would start its own embedded sandbox',
      'run `ledgerbot sandbox` (or a participant) once and point every member at it with `ledger.url`',
    );
  }
  const ms = parseDuration(fleet.leasePeriod);
  if (ms < MIN_LEASE_MS || ms > MAX_LEASE_MS) {
    problems.add(
      at.pos(['fleet', 'leasePeriod']),
      ['fleet', 'leasePeriod'],
      'BAD_LEASE_PERIOD',
      `\`fleet.leasePeriod\` is ${fleet.leasePeriod}: it must be between 300ms and 1h`,
      'members renew every third of it; a dead member is taken over within two periods (15s is usual)',
    );
  }
}
