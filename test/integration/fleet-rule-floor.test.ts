import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { expect, it } from 'vitest';
import { describeWithPg } from '../support/describe-with-pg.js';
import { withScope } from '../support/test-scope.js';
import { waitFor } from '../support/wait-for.js';
import { fleetOf, startMember } from './fleet-members.js';
import {
  RULES_DIR,
  countContracts,
  invoicePlan,
  isSmall,
  issueInvoices,
  startTestLedger,
  waitForEffects,
} from './harness.js';

// Issue 18: a fleet member's bot begins at the lowest checkpoint row of the rules it runs, and
// each rule evaluates only the events after its own row. Here the audit rule is paused, so its
// row (and the member's other rows) stay before the invoices issued then; the accept rule, new
// to the fleet by a reload after them, has its row at the ledger end. The bot that runs it
// begins at the audit rule's row: before, the accept rule evaluated those earlier invoices from
// there and accepted the small ones, which came before its history began.

const ACCEPT = 'accept-small-invoices';
const AUDIT = 'audit-invoices';

async function post(port: number, path: string): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST' });
  expect(res.status).toBe(200);
}

describeWithPg("a fleet member's rules", (server) => {
  it(
    'each evaluate from their own checkpoint row: a rule new to the fleet acts on nothing before it, though another rule of the bot is behind',
    () =>
      withScope(async (scope) => {
        const url = await server().freshDatabase();
        const ledger = scope.own(await startTestLedger(31));
        const rules = scope.tempDir('ledgerbot-fleet-rules-');
        cpSync(RULES_DIR, rules, { recursive: true });
        const file = join(rules, `${ACCEPT}.yaml`);
        const acceptText = readFileSync(file, 'utf8');
        rmSync(file);
        const member = await startMember(scope, ledger, url, { rules });
        await waitFor(
          () => fleetOf(member.port),
          (s) => s?.running.length === 2,
          90_000,
          'the member running the audit and settle rules',
        );
        const db = new pg.Client({ connectionString: url });
        db.on('error', () => undefined);
        await db.connect();
        scope.defer(db, () => db.end());
        const row = async (ruleId: string): Promise<number | undefined> => {
          const { rows } = await db.query<{ resume_offset: string }>(
            'SELECT resume_offset FROM fleet.lb_checkpoints WHERE owner = $1',
            [`rule:${ruleId}`],
          );
          return rows[0] === undefined ? undefined : Number(rows[0].resume_offset);
        };

        // The audit rule paused: its row holds before the invoices issued now.
        await post(member.port, `/rules/${AUDIT}/pause`);
        const before = invoicePlan(8, 7, 'B');
        expect(before.filter(isSmall).length).toBeGreaterThan(1);
        const beforeEnd = await ledger.client.ledgerEnd();
        await issueInvoices(ledger, before);
        const issued = await ledger.client.ledgerEnd();
        expect(await row(AUDIT)).toBeLessThanOrEqual(beforeEnd);

        // The accept rule added: its history begins at the ledger end, after those invoices.
        writeFileSync(file, acceptText);
        await post(member.port, '/rules/reload');
        await waitFor(
          () => fleetOf(member.port),
          (s) => s?.running.includes(ACCEPT) === true,
          30_000,
          'the member running the accept rule',
        );
        expect(await row(ACCEPT)).toBeGreaterThanOrEqual(issued);
        expect(await row(AUDIT)).toBeLessThanOrEqual(beforeEnd); // the bot began there

        // Invoices after it: accepted. Those before it: never.
        const after = invoicePlan(4, 8, 'A');
        const small = after.filter(isSmall).length;
        expect(small).toBeGreaterThan(0);
        await issueInvoices(ledger, after);
        await waitFor(
          () => countContracts(ledger),
          (c) => c.receipts >= small,
          60_000,
          'the later invoices accepted',
        );
        await new Promise((r) => setTimeout(r, 3_000)); // time for a stray acceptance to land
        const all = [...before, ...after];
        expect(await countContracts(ledger)).toEqual({
          seen: 0,
          receipts: small,
          payments: 0,
          invoices: all.length - small,
          duplicates: [],
        });

        // Resumed, the audit rule evaluates every invoice from its own row, once.
        await post(member.port, `/rules/${AUDIT}/resume`);
        await waitForEffects(
          ledger,
          { seen: all.length, receipts: small, payments: 0, invoices: all.length - small },
          60_000,
        );
        await member.bot.kill('SIGTERM');
        expect(await member.bot.exited).toEqual({ code: 0, signal: null });
      }),
    180_000,
  );
});
