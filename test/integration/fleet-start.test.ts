import pg from 'pg';
import { expect, it } from 'vitest';
import { describeWithPg } from '../support/describe-with-pg.js';
import { withScope } from '../support/test-scope.js';
import { FIXTURE_RULES, startMember } from './fleet-members.js';
import {
  expectedEffects,
  invoicePlan,
  issueInvoices,
  startTestLedger,
  waitForEffects,
} from './harness.js';

// The fleet chaos run's lost first invoice: a member reported ready while it ran no rule, and
// the bot it started once it held the leases began at the ledger end of that moment (no
// checkpoint row for the rules yet), so the invoices issued in between had no effect. A rule's
// history in the fleet begins when the first member that knows it starts, like a single bot's
// `start:`, and the member is not ready before that point is recorded.

async function readyz(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;
  } catch {
    return false;
  }
}

async function checkpointOwners(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ owner: string }>(
      'SELECT owner FROM fleet.lb_checkpoints ORDER BY owner',
    );
    return rows.map((r) => r.owner);
  } finally {
    await client.end();
  }
}

describeWithPg('a fleet member starting at the ledger end', (server) => {
  it(
    'has recorded where its rules begin when it says ready: invoices issued at once all get their effects',
    () =>
      withScope(async (scope) => {
        const url = await server().freshDatabase();
        const ledger = scope.own(await startTestLedger(19));
        const { port } = await startMember(scope, ledger, url, { start: 'ledger-end' });
        // Polled tightly: the first 200 is the moment that matters (the member's bot over no
        // rule yet, before its leases are taken).
        const until = Date.now() + 90_000;
        while (!(await readyz(port))) {
          if (Date.now() > until) throw new Error('the member did not become ready in 90 s');
          await new Promise<void>((r) => setTimeout(r, 5));
        }
        // Ready: each rule has its checkpoint row, whether or not its lease is taken yet.
        expect(await checkpointOwners(url)).toEqual(FIXTURE_RULES.map((id) => `rule:${id}`));
        const plan = invoicePlan(8, 19, 'READY');
        await issueInvoices(ledger, plan);
        await waitForEffects(ledger, expectedEffects(plan), 60_000);
      }),
    180_000,
  );
});
