import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { expect, it } from 'vitest';
import { describeWithPg } from '../support/describe-with-pg.js';
import { withScope } from '../support/test-scope.js';
import { waitFor } from '../support/wait-for.js';
import { cli } from '../support/cli-capture.js';
import { isIntentLine, writeBotConfig, type LogLine } from './child-bot.js';
import {
  fleetOf,
  FIXTURE_RULES,
  LEASE_MS,
  rulesSplit,
  startMembers,
  type FleetStatus,
} from './fleet-members.js';
import {
  ROOT,
  RULES_DIR,
  countContracts,
  expectedEffects,
  invoicePlan,
  issueInvoices,
  startTestLedger,
  waitForEffects,
} from './harness.js';

// Issue 18's "done when": three `ledgerbot run` processes with the same state.postgres schema and
// fleet name split the fixture rules (accept, audit, settle: one each, visible in /status), every
// effect lands once; one member is SIGKILLed while it works, the others take its rule within two
// lease periods, finish its open intents, and every effect is still there exactly once.

/** Controllers of Invoice:Cancel are the issuer: the payer alone is refused, for good. */
const CANCEL_AS_PAYER = `version: 1
rules:
  - id: cancel-as-payer
    description: a broken rule - the payer may not cancel the issuer's invoice
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    when: event.createArgument.currency == "CHF"
    then:
      - exercise:
          template: '#invoices:Invoice:Invoice'
          contractId: '\${{ event.contractId }}'
          choice: Cancel
        actAs: [payer]
`;

describeWithPg('a fleet of three on PostgreSQL', (server) => {
  it(
    'splits the rules 1/1/1, every effect once; a SIGKILLed member is taken over within two lease periods, still exactly once',
    () =>
      withScope(async (scope) => {
        const url = await server().freshDatabase();
        const ledger = scope.own(await startTestLedger(18));
        const members = await startMembers(scope, ledger, url);

        // The rules split one per member, each member's /status saying so.
        const split = async (): Promise<FleetStatus[]> =>
          (await Promise.all(members.map((m) => fleetOf(m.port)))).filter(
            (s): s is FleetStatus => s !== undefined,
          );
        const statuses = await waitFor(
          split,
          (all) =>
            all.length === 3 &&
            all.every((s) => s.running.length === 1) &&
            new Set(all.flatMap((s) => s.running)).size === 3,
          90_000,
          'the three members running one rule each',
        );
        expect(statuses.flatMap((s) => s.running).sort()).toEqual(FIXTURE_RULES);
        for (const s of statuses) {
          expect(s.members.filter((m) => m.live)).toHaveLength(3);
          expect(s.owners.map((o) => o.ruleId).sort()).toEqual(FIXTURE_RULES);
          const mine = s.owners.filter((o) => o.owner === s.instanceId).map((o) => o.ruleId);
          expect(mine).toEqual(s.running);
        }

        // Pause and resume are fleet-wide: asked of a member that does not run the rule, the
        // rule's owner carries them out.
        const acceptOwner = statuses.find((s) => s.running.includes('accept-small-invoices'))!;
        const other = members[(statuses.indexOf(acceptOwner) + 1) % 3]!;
        const ownerPort = members[statuses.indexOf(acceptOwner)]!.port;
        const act = async (port: number, action: string): Promise<Response> =>
          fetch(`http://127.0.0.1:${port}/rules/accept-small-invoices/${action}`, {
            method: 'POST',
          });
        const paused = await act(other.port, 'pause');
        const pausedBody = await paused.json();
        expect({ status: paused.status, body: pausedBody }).toEqual({
          status: 202,
          body: {
            forwarded: {
              kind: 'pause',
              ruleId: 'accept-small-invoices',
              owner: acceptOwner.instanceId,
            },
          },
        });
        const ruleState = async (): Promise<string | undefined> => {
          const body = (await (await fetch(`http://127.0.0.1:${ownerPort}/status`)).json()) as {
            rules: { id: string; state: string }[];
          };
          return body.rules.find((r) => r.id === 'accept-small-invoices')?.state;
        };
        await waitFor(ruleState, (s) => s === 'paused', 15_000, 'the owner pausing the rule');
        expect((await act(other.port, 'resume')).status).toBe(202);
        await waitFor(ruleState, (s) => s === 'active', 15_000, 'the owner resuming the rule');
        expect((await act(other.port, 'pause-nothing')).status).toBe(404);
        const unknown = await fetch(`http://127.0.0.1:${other.port}/rules/no-such-rule/pause`, {
          method: 'POST',
        });
        expect(unknown.status).toBe(404);

        const first = invoicePlan(20, 1, 'A');
        await issueInvoices(ledger, first);
        const once = await waitForEffects(ledger, expectedEffects(first), 60_000);
        expect(once.duplicates).toEqual([]);

        // Kill the accept rule's owner while it works: its open intents are the others' to finish.
        const owner = statuses.find((s) => s.running.includes('accept-small-invoices'))!;
        const victim = members[statuses.indexOf(owner)]!;
        const second = invoicePlan(20, 2, 'B');
        const issuing = issueInvoices(ledger, second);
        const seen = victim.bot.lines.length;
        await victim.bot.waitForLine(
          (l) => isIntentLine(l) && victim.bot.lines.indexOf(l) >= seen,
          30_000,
          'the victim working on the second batch',
        );
        const killedAt = Date.now();
        await victim.bot.kill('SIGKILL');
        await issuing;

        const db = new pg.Client({ connectionString: url });
        db.on('error', () => undefined);
        await db.connect();
        scope.defer(db, () => db.end());
        const taken = await waitFor(
          async () =>
            (
              await db.query<{ owner: string | null; acquired_at: Date }>(
                `SELECT owner, acquired_at FROM fleet.lb_fleet_leases WHERE rule_id = $1`,
                ['accept-small-invoices'],
              )
            ).rows[0],
          (row) => row !== undefined && row.owner !== null && row.owner !== owner.instanceId,
          30_000,
          'the accept rule taken over',
        );
        const takeoverMs = taken!.acquired_at.getTime() - killedAt;
        expect(takeoverMs).toBeLessThanOrEqual(2 * LEASE_MS);

        const all = [...first, ...second];
        const after = await waitForEffects(ledger, expectedEffects(all), 90_000);
        expect(after.duplicates).toEqual([]);
        // Every intent settled in the journal too: the victim's open ones finished by the taker.
        const openRows = async (): Promise<string[]> =>
          (
            await db.query<{ rule_id: string; state: string }>(
              `SELECT rule_id, state FROM fleet.lb_intents WHERE state IN ('pending', 'submitted')`,
            )
          ).rows.map((r) => `${r.rule_id} ${r.state}`);
        expect(await waitFor(openRows, (r) => r.length === 0, 30_000, 'no open intent')).toEqual(
          [],
        );
        // A checkpoint row per rule (the taker resumed the rule from its own).
        const cps = await db.query<{ owner: string }>(
          'SELECT owner FROM fleet.lb_checkpoints ORDER BY owner',
        );
        expect(cps.rows.map((r) => r.owner)).toEqual(
          FIXTURE_RULES.map((id) => `rule:${id}`).sort(),
        );

        // The survivors own every rule between them, as their /status shows.
        const survivors = members.filter((m) => m !== victim);
        const rest = await waitFor(
          async () => Promise.all(survivors.map((m) => fleetOf(m.port))),
          (s) =>
            s.every((x) => x !== undefined) &&
            new Set(s.flatMap((x) => x.running)).size === 3 &&
            s.every((x) => x.members.filter((m) => m.live).length === 2),
          30_000,
          'the survivors owning every rule',
        );
        expect(rest.flatMap((s) => s!.running).sort()).toEqual(FIXTURE_RULES);
        console.log(`fleet take-over: ${takeoverMs} ms after the SIGKILL (lease ${LEASE_MS} ms)`);

        // A member paused past its leases (SIGSTOP) loses its rules; woken up, its writes are
        // fenced, it starts again over what it still holds and rejoins, and nothing lands twice.
        const sleeper = survivors[0]!;
        sleeper.bot.child.kill('SIGSTOP');
        const third = invoicePlan(10, 3, 'C');
        await issueInvoices(ledger, third);
        await new Promise((r) => setTimeout(r, 2.5 * LEASE_MS));
        sleeper.bot.child.kill('SIGCONT');
        const everything = [...all, ...third];
        const last = await waitForEffects(ledger, expectedEffects(everything), 90_000);
        expect(last.duplicates).toEqual([]);
        const rejoined = await waitFor(
          async () => Promise.all(survivors.map((m) => fleetOf(m.port))),
          (s) =>
            s.every((x) => x !== undefined) &&
            new Set(s.flatMap((x) => x.running)).size === 3 &&
            s.every((x) => x.running.length >= 1) &&
            s.every((x) => x.members.filter((m) => m.live).length === 2),
          30_000,
          'the woken member rejoining with a share of the rules',
        );
        expect(rejoined.flatMap((s) => s!.running).sort()).toEqual(FIXTURE_RULES);
        const final = await countContracts(ledger);
        expect(final.duplicates).toEqual([]);
        for (const m of survivors) await m.bot.kill('SIGTERM');
        for (const m of survivors) {
          expect(await m.bot.exited).toEqual({ code: 0, signal: null });
          // The woken member's writes were refused (fenced): said at error level, and nothing else.
          const errors = m.bot.lines.filter((l) => (l.level ?? 0) >= 50);
          const fenced = (l: LogLine): boolean =>
            JSON.stringify(l).includes('no longer holds the lease');
          expect(errors.filter((l) => !fenced(l))).toEqual([]);
          if (m === sleeper)
            expect(m.bot.lines.some((l) => l.msg?.startsWith('rules lost'))).toBe(true);
        }
      }),
    300_000,
  );

  it(
    'retries a dead letter asked of a member that does not run its rule: the owner does it, once',
    () =>
      withScope(async (scope) => {
        const url = await server().freshDatabase();
        const ledger = scope.own(await startTestLedger(20));
        const rules = scope.tempDir('ledgerbot-fleet-rules-');
        cpSync(RULES_DIR, rules, { recursive: true });
        writeFileSync(join(rules, 'cancel-as-payer.yaml'), CANCEL_AS_PAYER);
        const members = await startMembers(scope, ledger, url, rules);
        const statuses = await rulesSplit(
          members,
          4,
          'the four rules split between the three members',
        );
        const plan = invoicePlan(30, 7, 'D');
        const chf = plan.filter((p) => p.currency === 'CHF').length;
        expect(chf).toBeGreaterThan(0);
        await issueInvoices(ledger, plan);
        const ownerAt = statuses.findIndex((s) => s.running.includes('cancel-as-payer'));
        const other = members[(ownerAt + 1) % 3]!;
        const owner = members[ownerAt]!;
        // Any member lists the fleet's dead letters.
        type Letter = { commandId: string; ruleId: string };
        const letters = await waitFor(
          async () =>
            (
              (await (await fetch(`http://127.0.0.1:${other.port}/dead-letters`)).json()) as {
                deadLetters: Letter[];
              }
            ).deadLetters,
          (l) => l.length === chf,
          60_000,
          'the dead letters of the broken rule, listed by another member',
        );
        const id = letters[0]!.commandId;
        const answer = await fetch(`http://127.0.0.1:${other.port}/dead-letters/${id}/retry`, {
          method: 'POST',
        });
        expect(answer.status).toBe(202);
        expect(await answer.json()).toEqual({
          forwarded: {
            kind: 'retry',
            ruleId: 'cancel-as-payer',
            commandId: id,
            owner: statuses[ownerAt]!.instanceId,
          },
        });
        const carried = (l: LogLine): boolean =>
          l.msg === 'fleet request carried out' && l.commandId === id;
        await owner.bot.waitForLine(carried, 15_000, 'the owner retrying the dead letter');
        // Broken for good: dead-lettered again, after one more attempt, by the owner only.
        await new Promise((r) => setTimeout(r, LEASE_MS));
        expect(members.flatMap((m) => m.bot.lines.filter(carried))).toHaveLength(1);
        const again = await waitFor(
          async () =>
            (await fetch(`http://127.0.0.1:${other.port}/dead-letters/${id}`)).json() as Promise<{
              deadLetter?: { attempts: number };
            }>,
          (b) => b.deadLetter !== undefined,
          15_000,
          'the retried intent dead-lettered again',
        );
        expect(again.deadLetter!.attempts).toBe(1);

        // At least once: a request claimed by a member that died before it was done (its claim
        // a lease period old) is carried out by the owner; the drop of a dead letter that is
        // not there is a no-op, said at info; both are deleted once done.
        expect(letters.length).toBeGreaterThan(1);
        const second = letters[1]!.commandId;
        const db = new pg.Client({ connectionString: url });
        db.on('error', () => undefined);
        await db.connect();
        scope.defer(db, () => db.end());
        await db.query(
          `INSERT INTO fleet.lb_fleet_requests
               (rule_id, kind, command_id, requested_by, taken_by, taken_at)
             VALUES ('cancel-as-payer', 'retry', $1, 'gone', 'gone', now() - interval '1 hour'),
                    ('cancel-as-payer', 'drop', 'lb-no-such-command', 'gone', NULL, NULL)`,
          [second],
        );
        await owner.bot.waitForLine(
          (l) => l.msg === 'fleet request carried out' && l.commandId === second,
          15_000,
          'the owner retrying the dead letter of a dead taker',
        );
        await owner.bot.waitForLine(
          (l) =>
            l.msg === 'fleet request already carried out: no such dead letter' &&
            l.commandId === 'lb-no-such-command' &&
            l.level === 30,
          15_000,
          'the owner finding nothing to drop',
        );
        await waitFor(
          async () => (await db.query('SELECT id FROM fleet.lb_fleet_requests')).rows.length,
          (n) => n === 0,
          15_000,
          'the requests deleted once done',
        );

        // The CLI's drop, asked of the member that does not run the rule: forwarded (exit 0), and
        // the owner drops the dead letter.
        const cliDir = scope.tempDir('ledgerbot-fleet-cli-');
        const config = writeBotConfig(ledger, cliDir, {
          stateDir: join(cliDir, 'state'),
          postgres: { url, schema: 'fleet' },
          rules,
        });
        writeFileSync(config, `http: { port: ${other.port} }\n`, { flag: 'a' });
        const dropped = await cli(['dead-letters', 'drop', id, '--config', config]);
        expect({ code: dropped.code, err: dropped.err }).toEqual({ code: 0, err: '' });
        expect(dropped.out).toBe(
          `the drop of ${id} was forwarded via the running bot at http://127.0.0.1:${other.port} to the rule's owner (${statuses[ownerAt]!.instanceId}), which carries it out at its next round\n`,
        );
        await waitFor(
          async () => (await fetch(`http://127.0.0.1:${other.port}/dead-letters/${id}`)).status,
          (status) => status === 404,
          15_000,
          'the dead letter dropped by its owner',
        );
        expect(await waitForEffects(ledger, expectedEffects(plan), 30_000)).toMatchObject({
          duplicates: [],
        });
      }),
    180_000,
  );

  it(
    "splits examples/invoices' four rules between three members, visible in /status",
    () =>
      withScope(async (scope) => {
        const url = await server().freshDatabase();
        const ledger = scope.own(await startTestLedger(19));
        const members = await startMembers(
          scope,
          ledger,
          url,
          join(ROOT, 'examples/invoices/rules'),
        );
        const statuses = await rulesSplit(
          members,
          4,
          'the four rules split between the three members',
        );
        expect(statuses.flatMap((s) => s.running).sort()).toEqual([
          'accept-small-invoices',
          'nudge-large-invoices',
          'settle-accepted-invoices',
          'weekday-reminders',
        ]);
        expect(statuses.map((s) => s.running.length).sort()).toEqual([1, 1, 2]);
        for (const m of members) await m.bot.kill('SIGTERM');
        for (const m of members) expect(await m.bot.exited).toEqual({ code: 0, signal: null });
      }),
    180_000,
  );
});
