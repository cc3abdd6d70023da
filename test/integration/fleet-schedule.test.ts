import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { expect, it } from 'vitest';
import { describeWithPg } from '../support/describe-with-pg.js';
import { withScope } from '../support/test-scope.js';
import { waitFor } from '../support/wait-for.js';
import { fleetOf, startMembers, type Member } from './fleet-members.js';
import { countContracts, startTestLedger } from './harness.js';

// Issue 18, "Schedules: one slot runs once in the fleet": three members on one schema, a rule
// with a slot every two seconds. Only the rule's owner runs its slots; when the owner is
// SIGKILLed (possibly inside a slot) another takes the rule, and when that one stops the last
// takes it; every slot's intent is still recorded once in the journal and lands once on the ledger.

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

describeWithPg('a schedule in a fleet of three on PostgreSQL', (server) => {
  it(
    "runs each slot once, its intent recorded and submitted once, also when the rule's owner changes",
    () =>
      withScope(async (scope) => {
        const url = await server().freshDatabase();
        const ledger = scope.own(await startTestLedger(21));
        const rules = scope.tempDir('ledgerbot-fleet-schedule-');
        writeFileSync(join(rules, 'stamp.yaml'), STAMP_RULE);
        const members = await startMembers(scope, ledger, url, rules);
        const db = new pg.Client({ connectionString: url });
        db.on('error', () => undefined);
        await db.connect();
        scope.defer(db, () => db.end());

        /** The member of `among` running the rule, once one does. */
        const ownerAmong = async (among: readonly Member[], what: string): Promise<Member> => {
          const at = await waitFor(
            async () => {
              const all = await Promise.all(among.map((m) => fleetOf(m.port)));
              return all.findIndex((s) => s?.running.includes(RULE) === true);
            },
            (i) => i >= 0,
            90_000,
            what,
          );
          return among[at]!;
        };
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
        const first = await ownerAmong(members, 'a member running the rule');
        await waitFor(succeeded, (n) => n >= 3, 60_000, 'three slots run by the first owner');

        // The owner dies, perhaps inside a slot: another member takes the rule and runs on.
        await first.bot.kill('SIGKILL');
        const beforeKill = await succeeded();
        const survivors = members.filter((m) => m !== first);
        const second = await ownerAmong(survivors, 'a survivor taking the rule');
        await waitFor(succeeded, (n) => n >= beforeKill + 3, 60_000, 'three slots by the second');

        // The second owner stops (SIGTERM: it drains and lets its leases go): the last one takes.
        await second.bot.kill('SIGTERM');
        expect(await second.bot.exited).toEqual({ code: 0, signal: null });
        const beforeStop = await succeeded();
        const last = await ownerAmong(
          survivors.filter((m) => m !== second),
          'the last member taking the rule',
        );
        await waitFor(succeeded, (n) => n >= beforeStop + 3, 60_000, 'three slots by the last');
        await last.bot.kill('SIGTERM');
        expect(await last.bot.exited).toEqual({ code: 0, signal: null });

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
        expect(slots.length).toBeGreaterThanOrEqual(9);
        // The ledger: one Seen per slot run, no reference twice.
        const counts = await countContracts(ledger);
        expect(counts.duplicates).toEqual([]);
        expect(counts.seen).toBe(slots.length);
        console.log(
          `fleet schedule: ${slots.length} slots, each once (${beforeKill} before the first owner's SIGKILL, ${beforeStop} before the second's SIGTERM)`,
        );
      }),
    240_000,
  );
});
