import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { expect, it } from 'vitest';
import { describeWithPg } from '../support/describe-with-pg.js';
import { withScope } from '../support/test-scope.js';
import { waitFor } from '../support/wait-for.js';
import { explained, fleetOf, startMember } from './fleet-members.js';
import {
  RULES_DIR,
  countContracts,
  invoicePlan,
  isSmall,
  issueInvoices,
  startTestLedger,
  waitForEffects,
  type Effects,
  type InvoiceSpec,
} from './harness.js';

// Issue 18: a rule a fleet's reload removes, added back later, begins where it is added (as on a
// single bot), not at the checkpoint row it had when it was removed. Before, its old row stayed
// and the member that took it back replayed the events of the time it was not in the rule set:
// here, it accepted the invoices issued while the accept rule was removed.

const ACCEPT = 'accept-small-invoices';

/** The fixture rules' effects when only the invoices in `accepted` met the accept rule. */
function effects(all: readonly InvoiceSpec[], accepted: readonly InvoiceSpec[]): Effects {
  const receipts = accepted.filter(isSmall).length;
  return { seen: all.length, receipts, payments: 0, invoices: all.length - receipts };
}

async function reload(port: number): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/rules/reload`, { method: 'POST' });
  expect(res.status).toBe(200);
}

describeWithPg('a fleet reload', (server) => {
  it(
    'forgets a removed rule: added back, it begins where it is added, not where it stopped',
    () =>
      withScope(async (scope) => {
        const url = await server().freshDatabase();
        const ledger = scope.own(await startTestLedger(29));
        const rules = scope.tempDir('ledgerbot-fleet-rules-');
        cpSync(RULES_DIR, rules, { recursive: true });
        const member = await startMember(scope, ledger, url, { rules });
        await waitFor(
          () => fleetOf(member.port),
          (s) => s?.running.length === 3,
          90_000,
          'the member running the three rules',
        );
        const db = new pg.Client({ connectionString: url });
        db.on('error', () => undefined);
        await db.connect();
        scope.defer(db, () => db.end());
        const checkpoints = async (): Promise<Record<string, number>> =>
          Object.fromEntries(
            (
              await db.query<{ owner: string; resume_offset: string }>(
                'SELECT owner, resume_offset FROM fleet.lb_checkpoints',
              )
            ).rows.map((r) => [r.owner, Number(r.resume_offset)]),
          );

        const first = invoicePlan(6, 1, 'R1');
        await issueInvoices(ledger, first);
        await waitForEffects(ledger, effects(first, first), 60_000);

        // Removed: its row is forgotten once the member has handed the rule on.
        const file = join(rules, `${ACCEPT}.yaml`);
        const text = readFileSync(file, 'utf8');
        rmSync(file);
        await reload(member.port);
        await explained(
          member,
          waitFor(
            checkpoints,
            (rows) => !(`rule:${ACCEPT}` in rows),
            30_000,
            "the removed rule's checkpoint row forgotten",
          ),
        );
        const status = await explained(
          member,
          waitFor(
            () => fleetOf(member.port),
            (s) => s?.running.length === 2,
            30_000,
            'the member running the two rules left',
          ),
        );
        // Its released lease is not shown as a rule without an owner.
        expect(status!.owners.map((o) => o.ruleId)).not.toContain(ACCEPT);

        // Invoices while it is removed: audited, not accepted; the other rules' rows move past.
        const second = invoicePlan(6, 2, 'R2');
        await issueInvoices(ledger, second);
        await waitForEffects(ledger, effects([...first, ...second], first), 60_000);
        const end = await ledger.client.ledgerEnd();
        await waitFor(
          checkpoints,
          (rows) =>
            Object.entries(rows).every(([owner, at]) => owner === `rule:${ACCEPT}` || at >= end),
          30_000,
          'the other rules checkpointed past the invoices issued meanwhile',
        );

        // Added back: it acts on what comes now, not on what came while it was removed.
        writeFileSync(file, text);
        await reload(member.port);
        await waitFor(
          () => fleetOf(member.port),
          (s) => s?.running.includes(ACCEPT) === true,
          30_000,
          'the member running the rule again',
        );
        expect((await checkpoints())[`rule:${ACCEPT}`]).toBeGreaterThanOrEqual(end);
        const third = invoicePlan(4, 3, 'R3');
        expect(third.filter(isSmall).length).toBeGreaterThan(0);
        await issueInvoices(ledger, third);
        const all = [...first, ...second, ...third];
        const expected = effects(all, [...first, ...third]);
        await waitFor(
          () => countContracts(ledger),
          (c) => c.seen === all.length && c.receipts >= expected.receipts,
          60_000,
          'the new invoices accepted',
        );
        // Time enough for a replay of the invoices issued while it was removed: none comes.
        await new Promise((r) => setTimeout(r, 3_000));
        expect(await countContracts(ledger)).toEqual({ ...expected, duplicates: [] });
        await member.bot.kill('SIGTERM');
        expect(await member.bot.exited).toEqual({ code: 0, signal: null });
      }),
    180_000,
  );
});
