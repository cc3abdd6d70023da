import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { expect, it } from 'vitest';
import { describeWithPg } from '../support/describe-with-pg.js';
import { withScope } from '../support/test-scope.js';
import { waitFor } from '../support/wait-for.js';
import { fleetOf, startMembers, type Member } from './fleet-members.js';
import { startTestLedger } from './harness.js';

// Issue 18: a schedule rule paused fleet-wide runs no slot, on its owner and on the member that
// takes it over (which starts it paused); resumed, the slots missed meanwhile go to its catchUp
// policy (`last`: the latest of them runs at once), then it keeps to its schedule.

const RULE = 'stamp-every-two-seconds';
const SLOT_MS = 2_000;
const STAMP_RULE = `version: 1
rules:
  - id: ${RULE}
    schedule: { cron: '*/2 * * * * *', timezone: UTC, catchUp: last }
    then:
      - create:
          template: '#audit:Audit:Seen'
          createArguments:
            owner: '\${{ parties.issuer }}'
            reference: 'slot \${{ now }}'
            amount: '1.00'
        actAs: [issuer]
`;

async function post(port: number, path: string): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST' });
  expect(res.status).toBe(200);
}

describeWithPg('a paused schedule rule in a fleet of two on PostgreSQL', (server) => {
  it(
    'runs no slot while paused, also on the member that takes it over, and catches up as after downtime once resumed',
    () =>
      withScope(async (scope) => {
        const url = await server().freshDatabase();
        const ledger = scope.own(await startTestLedger(37));
        const rules = scope.tempDir('ledgerbot-fleet-schedule-pause-');
        writeFileSync(join(rules, 'stamp.yaml'), STAMP_RULE);
        const members = await startMembers(scope, ledger, url, rules, 2);
        const db = new pg.Client({ connectionString: url });
        db.on('error', () => undefined);
        await db.connect();
        scope.defer(db, () => db.end());
        /** The slots with an intent in the journal, ascending (epoch ms). */
        const slots = async (): Promise<number[]> =>
          (
            await db.query<{ trigger_slot: string }>(
              `SELECT trigger_slot FROM fleet.lb_intents
                 WHERE rule_id = $1 AND trigger_kind = 'slot' ORDER BY trigger_slot`,
              [RULE],
            )
          ).rows.map((r) => Number(r.trigger_slot));
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

        const owner = await ownerAmong(members, 'a member running the rule');
        await waitFor(slots, (s) => s.length >= 2, 60_000, 'two slots run');
        await post(owner.port, `/rules/${RULE}/pause`);
        await new Promise((r) => setTimeout(r, 1_000)); // a slot running at the pause finishes
        const before = await slots();
        const last = before.at(-1)!;

        // The owner dies; the survivor takes the rule paused and runs none of its slots either.
        await owner.bot.kill('SIGKILL');
        const survivor = members.find((m) => m !== owner)!;
        await ownerAmong([survivor], 'the survivor running the rule');
        await new Promise((r) => setTimeout(r, 2 * SLOT_MS + 500));
        expect(await slots()).toEqual(before);

        // Resumed: the latest missed slot at once (catchUp: last), then every slot on time.
        const resumedAt = Date.now();
        await post(survivor.port, `/rules/${RULE}/resume`);
        const after = await waitFor(
          async () => (await slots()).filter((s) => s > last),
          (s) => s.length >= 2,
          30_000,
          'slots after the resume',
        );
        expect(after[0]).toBeGreaterThan(last + SLOT_MS); // the slots in between were left out
        expect(after[0]).toBeLessThanOrEqual(resumedAt + SLOT_MS);
        expect(after[1]! - after[0]!).toBe(SLOT_MS);
        await survivor.bot.kill('SIGTERM');
        expect(await survivor.bot.exited).toEqual({ code: 0, signal: null });
      }),
    180_000,
  );
});
