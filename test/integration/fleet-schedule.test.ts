import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgSkipReason, startPgServer, type PgServer } from '../support/pg-server.js';
import { withScope } from '../support/test-scope.js';
import { waitFor } from '../support/wait-for.js';
import { fleetOf, startMembers } from './fleet-members.js';
import { countContracts, startTestLedger } from './harness.js';

// Issue 18, "Schedules: one slot runs once in the fleet": three members on one schema, a rule
// with a slot every two seconds. Only the rule's owner runs its slots; when the owner is
// SIGKILLed (possibly inside a slot) another takes the rule, and every slot's intent is still
// recorded once in the journal and lands once on the ledger.

const skipReason = pgSkipReason();
const RULE = 'stamp-every-two-seconds';
const STAMP_RULE = `version: 1
rules:
  - id: ${RULE}
    schedule: { cron: '*/2 * * * * *', timezone: UTC, catchUp: none }
    then:
      - create:
          template: '#audit:Audit:Seen'
          createArguments:
            owner: '\${{ parties.issuer }}'
            reference: 'slot \${{ now }}'
            amount: '1.00'
        actAs: [issuer]
`;

describe.skipIf(skipReason !== undefined)(
  `a schedule in a fleet of three on PostgreSQL${skipReason === undefined ? '' : ` (skipped: ${skipReason})`}`,
  () => {
    let server: PgServer;
    beforeAll(async () => {
      server = await startPgServer();
    }, 120_000);
    afterAll(() => server?.close());

    it(
      "runs each slot once, its intent recorded and submitted once, also when the rule's owner changes",
      () =>
        withScope(async (scope) => {
          const url = await server.freshDatabase();
          const ledger = scope.own(await startTestLedger(21));
          const rules = scope.tempDir('ledgerbot-fleet-schedule-');
          writeFileSync(join(rules, 'stamp.yaml'), STAMP_RULE);
          const members = await startMembers(scope, ledger, url, rules);
          const db = new pg.Client({ connectionString: url });
          db.on('error', () => undefined);
          await db.connect();
          scope.defer(db, () => db.end());

          const ownerAt = async (): Promise<number> => {
            const all = await Promise.all(members.map((m) => fleetOf(m.port)));
            return all.findIndex((s) => s?.running.includes(RULE) === true);
          };
          const first = await waitFor(ownerAt, (i) => i >= 0, 90_000, 'a member running the rule');
          const succeeded = async (): Promise<number> =>
            Number(
              (
                await db.query<{ n: string }>(
                  `SELECT count(*) AS n FROM fleet.lb_intents
                   WHERE rule_id = $1 AND trigger_kind = 'slot' AND state = 'succeeded'`,
                  [RULE],
                )
              ).rows[0]!.n,
            );
          await waitFor(succeeded, (n) => n >= 3, 60_000, 'three slots run by the first owner');

          // The owner dies, perhaps inside a slot: another member takes the rule and runs on.
          const victim = members[first]!;
          await victim.bot.kill('SIGKILL');
          const before = await succeeded();
          const survivors = members.filter((m) => m !== victim);
          await waitFor(
            async () => {
              const all = await Promise.all(survivors.map((m) => fleetOf(m.port)));
              return all.findIndex((s) => s?.running.includes(RULE) === true);
            },
            (i) => i >= 0,
            60_000,
            'a survivor taking the rule',
          );
          await waitFor(succeeded, (n) => n >= before + 3, 60_000, 'three slots by the new owner');
          for (const m of survivors) await m.bot.kill('SIGTERM');
          for (const m of survivors) expect(await m.bot.exited).toEqual({ code: 0, signal: null });

          // The journal: one intent per slot, none left open.
          const rows = (
            await db.query<{ trigger_slot: string; state: string; n: string }>(
              `SELECT trigger_slot, state, count(*) AS n FROM fleet.lb_intents
               WHERE rule_id = $1 GROUP BY trigger_slot, state ORDER BY trigger_slot`,
              [RULE],
            )
          ).rows;
          expect(rows.filter((r) => r.n !== '1')).toEqual([]);
          expect(rows.filter((r) => r.state !== 'succeeded')).toEqual([]);
          const slots = rows.map((r) => r.trigger_slot);
          expect(new Set(slots).size).toBe(slots.length);
          expect(slots.length).toBeGreaterThanOrEqual(6);
          // The ledger: one Seen per slot run, no reference twice.
          const counts = await countContracts(ledger);
          expect(counts.duplicates).toEqual([]);
          expect(counts.seen).toBe(slots.length);
          console.log(
            `fleet schedule: ${slots.length} slots, each once (${before} before the owner's SIGKILL)`,
          );
        }),
      240_000,
    );
  },
);
