import pg from 'pg';
import { expect, it } from 'vitest';
import { describeWithPg } from '../support/describe-with-pg.js';
import { withScope } from '../support/test-scope.js';
import { waitFor } from '../support/wait-for.js';
import { isIntentLine } from './child-bot.js';
import {
  FIXTURE_RULES,
  fleetOf,
  rulesSplit,
  startMembers,
  type FleetStatus,
} from './fleet-members.js';
import {
  countContracts,
  expectedEffects,
  invoicePlan,
  isSmall,
  issueInvoices,
  startTestLedger,
  waitForEffects,
} from './harness.js';

// Issue 18: a pause is fleet-wide, and it holds when the rule changes owner. Before, a member
// that took a paused rule started its bot with the rule active from its held checkpoint and paused
// it only once the bot ran, so the events that came during the pause were acted on at every
// take-over. Two members here (the fixture's three rules split 2/1): the accept rule is paused on
// its owner, invoices come, the owner is SIGKILLed, more invoices come; the survivor takes the
// rule paused and accepts nothing until it is resumed, then every invoice once.

const ACCEPT = 'accept-small-invoices';

type RuleRow = { id: string; state: string; pausedAtOffset?: number };

async function ruleOf(port: number): Promise<RuleRow | undefined> {
  try {
    const body = (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as {
      rules: RuleRow[];
    };
    return body.rules.find((r) => r.id === ACCEPT);
  } catch {
    return undefined; // restarting its bot
  }
}

describeWithPg('a fleet-wide pause', (server) => {
  it(
    'holds across a take-over: the new owner acts on none of the paused events until resumed, then on each once',
    () =>
      withScope(async (scope) => {
        const url = await server().freshDatabase();
        const ledger = scope.own(await startTestLedger(23));
        const members = await startMembers(scope, ledger, url, undefined, 2);
        const statuses = await rulesSplit(
          members,
          3,
          'the three rules split between the two members',
        );
        const ownerAt = statuses.findIndex((s) => s.running.includes(ACCEPT));
        const owner = members[ownerAt]!;
        const survivor = members[1 - ownerAt]!;

        const paused = await fetch(`http://127.0.0.1:${owner.port}/rules/${ACCEPT}/pause`, {
          method: 'POST',
        });
        expect(paused.status).toBe(200);

        // While paused: every invoice audited (the other rules run), none accepted.
        const first = invoicePlan(10, 5, 'P');
        const second = invoicePlan(6, 6, 'Q');
        const all = [...first, ...second];
        expect(all.filter(isSmall).length).toBeGreaterThan(3);
        const unaccepted = (n: number) => ({ seen: n, receipts: 0, payments: 0, invoices: n });
        await issueInvoices(ledger, first);
        await waitForEffects(ledger, unaccepted(first.length), 60_000);

        const db = new pg.Client({ connectionString: url });
        db.on('error', () => undefined);
        await db.connect();
        scope.defer(db, () => db.end());
        await owner.bot.kill('SIGKILL');
        const acceptRow = async (): Promise<number> =>
          Number(
            (
              await db.query<{ resume_offset: string }>(
                'SELECT resume_offset FROM fleet.lb_checkpoints WHERE owner = $1',
                [`rule:${ACCEPT}`],
              )
            ).rows[0]?.resume_offset,
          );
        const held = await acceptRow();
        // As the killed owner's lease runs out, the table of pauses answers slowly: locked for
        // 2 s (a second under the fleet pool's 3 s statement timeout, which a loaded machine's
        // late COMMIT must not reach: the member's read would fail), across the survivor's take-over
        // (a round, at most 1 s, after the lease ran out). Before the fix, the new bot ran the
        // rule, active, for as long as reading its pause took, and acted on the paused events
        // meanwhile; on a quiet machine the read usually won that race, but not always.
        await waitFor(
          async () =>
            (
              await db.query<{ due: boolean }>(
                `SELECT expires_at < now() + interval '400 milliseconds' AS due
                     FROM fleet.lb_fleet_leases WHERE rule_id = $1`,
                [ACCEPT],
              )
            ).rows[0]?.due,
          (due) => due === true,
          30_000,
          "the killed owner's lease running out",
        );
        await db.query('BEGIN');
        await db.query('LOCK TABLE fleet.lb_fleet_rule_control IN ACCESS EXCLUSIVE MODE');
        await new Promise((r) => setTimeout(r, 2_000));
        await db.query('COMMIT');
        const taken = await waitFor(
          async () => ({
            fleet: await fleetOf(survivor.port),
            rule: await ruleOf(survivor.port),
          }),
          // While its bot starts (before its stream opens) /status can show the rule active: the
          // pause is applied where the bot learns its start offset. Paused it must become; that
          // it acted on nothing meanwhile is asserted below.
          (s) => s.fleet?.running.includes(ACCEPT) === true && s.rule?.state === 'paused',
          30_000,
          'the survivor running the accept rule, paused',
        );
        expect((taken.fleet as FleetStatus).running.sort()).toEqual([...FIXTURE_RULES].sort());
        expect(taken.rule?.state).toBe('paused');

        await issueInvoices(ledger, second);
        await waitForEffects(ledger, unaccepted(all.length), 60_000);
        // Time enough for the survivor to act, were it going to: it must not have.
        await new Promise((r) => setTimeout(r, 3_000));
        expect(await countContracts(ledger)).toMatchObject(unaccepted(all.length));
        // The rule's checkpoint row stays where the pause held it, the new owner's hold at or
        // below it, while the other rules' events went on.
        expect(await acceptRow()).toBe(held);
        expect((await ruleOf(survivor.port))?.pausedAtOffset).toBeLessThanOrEqual(held);
        expect(await ledger.client.ledgerEnd()).toBeGreaterThan(held);
        expect(survivor.bot.lines.filter((l) => isIntentLine(l) && l.ruleId === ACCEPT)).toEqual(
          [],
        );

        const resumed = await fetch(`http://127.0.0.1:${survivor.port}/rules/${ACCEPT}/resume`, {
          method: 'POST',
        });
        expect(resumed.status).toBe(200);
        const done = await waitForEffects(ledger, expectedEffects(all), 60_000);
        expect(done.duplicates).toEqual([]);
        await waitFor(acceptRow, (at) => at > held, 15_000, "the rule's checkpoint moving on");
        expect(
          await waitFor(
            () => ruleOf(survivor.port),
            (r) => r?.state === 'active',
            15_000,
            'the rule active again',
          ),
        ).toMatchObject({ state: 'active' });
        await survivor.bot.kill('SIGTERM');
        expect(await survivor.bot.exited).toEqual({ code: 0, signal: null });
      }),
    240_000,
  );
});
