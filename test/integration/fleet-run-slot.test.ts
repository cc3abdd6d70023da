import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { expect, it } from 'vitest';
import { cli } from '../support/cli-capture.js';
import { describeWithPg } from '../support/describe-with-pg.js';
import { withScope } from '../support/test-scope.js';
import { waitFor } from '../support/wait-for.js';
import { writeBotConfig, type LogLine } from './child-bot.js';
import { fleetOf, startMembers } from './fleet-members.js';
import { countContracts, RULES_DIR, startTestLedger } from './harness.js';

// Issue 18: `run-slot` asked of a fleet member that does not run the schedule rule is forwarded
// to the rule's owner, as a dead letter's retry is; the owner runs the slot through its
// manual-slot runner. Asked twice, the slot makes the same commandId, so it lands once; a request
// claimed again after its taker died is not run again once the slot is completed. The CLI's
// run-slot, pause and resume against such a member say that they were forwarded. Two members.

const RULE = 'stamp-new-year';
const STAMP_RULE = `version: 1
rules:
  - id: ${RULE}
    schedule: { cron: '0 0 1 1 *', timezone: UTC, catchUp: none }
    then:
      - create:
          template: '#audit:Audit:Seen'
          createArguments:
            owner: '\${{ parties.issuer }}'
            reference: 'slot \${{ now }}'
            amount: '1.00'
        actAs: [issuer]
`;
const AT = '2026-06-01T12:00:00.000Z';
const SLOT = '2026-01-01T00:00:00.000Z';

describeWithPg(
  'run-slot, pause and resume asked of a fleet member that does not run the rule',
  (server) => {
    it(
      "is forwarded to the schedule rule's owner, which runs the slot once in the fleet",
      () =>
        withScope(async (scope) => {
          const url = await server().freshDatabase();
          const ledger = scope.own(await startTestLedger(23));
          const rules = scope.tempDir('ledgerbot-fleet-run-slot-');
          cpSync(RULES_DIR, rules, { recursive: true });
          writeFileSync(join(rules, 'stamp.yaml'), STAMP_RULE);
          const members = await startMembers(scope, ledger, url, rules, 2);
          const statuses = await waitFor(
            async () => Promise.all(members.map((m) => fleetOf(m.port))),
            (all) =>
              all.every((s) => s !== undefined && s.running.length === 2) &&
              new Set(all.flatMap((s) => s!.running)).size === 4,
            90_000,
            'the four rules split between the two members',
          );
          const ownerAt = statuses.findIndex((s) => s!.running.includes(RULE));
          const owner = members[ownerAt]!;
          const other = members[1 - ownerAt]!;
          const ownerId = statuses[ownerAt]!.instanceId;
          const db = new pg.Client({ connectionString: url });
          db.on('error', () => undefined);
          await db.connect();
          scope.defer(db, () => db.end());

          const runSlot = (port: number, rule: string, at: string): Promise<Response> =>
            fetch(`http://127.0.0.1:${port}/rules/${rule}/run-slot?at=${encodeURIComponent(at)}`, {
              method: 'POST',
            });
          const carried = (l: LogLine): boolean =>
            l.msg === 'fleet request carried out' && l.kind === 'run-slot';
          type Row = { command_id: string; state: string; updated_at: string; attempts: number };
          const slotIntents = async (): Promise<Row[]> =>
            (
              await db.query<Row>(
                `SELECT command_id, state, updated_at, attempts FROM fleet.lb_intents
                 WHERE rule_id = $1`,
                [RULE],
              )
            ).rows;

          const answer = await runSlot(other.port, RULE, AT);
          expect({ status: answer.status, body: await answer.json() }).toEqual({
            status: 202,
            body: { forwarded: { kind: 'run-slot', ruleId: RULE, at: AT, owner: ownerId } },
          });
          const line = await owner.bot.waitForLine(carried, 15_000, 'the owner running the slot');
          expect(line).toMatchObject({ ruleId: RULE, slot: SLOT, intents: 1 });
          const first = await waitFor(
            slotIntents,
            (rows) => rows.length === 1 && rows[0]!.state === 'succeeded',
            30_000,
            "the slot's intent succeeded",
          );
          expect((await countContracts(ledger)).seen).toBe(1);

          // Asked again (here through the CLI, with a config naming the member that does not
          // run the rule): forwarded, run by the owner again; the same commandId lands once.
          const cliDir = scope.tempDir('ledgerbot-fleet-run-slot-cli-');
          const config = writeBotConfig(ledger, cliDir, {
            stateDir: join(cliDir, 'state'),
            postgres: { url, schema: 'fleet' },
            rules,
          });
          writeFileSync(config, `http: { port: ${other.port} }\n`, { flag: 'a' });
          const viaCli = await cli(['run-slot', '--config', config, '--rule', RULE, '--at', AT]);
          expect(viaCli.err).toBe('');
          expect(viaCli.code).toBe(0);
          expect(viaCli.out).toContain(`to the rule's owner (${ownerId})`);
          await waitFor(
            () => Promise.resolve(owner.bot.lines.filter(carried).length),
            (n) => n === 2,
            15_000,
            'the owner running the slot again',
          );
          // The request is done once the second run's writes are committed: its intent, already
          // in the journal (though no longer in the store's memory), is left as it is and not
          // sent again (before the fix: recorded anew, its row overwritten, sent, `duplicate`).
          expect(await slotIntents()).toEqual(first);
          expect(other.bot.lines.filter(carried)).toEqual([]);

          // A request for the completed slot claimed again after its taker died is a no-op.
          await db.query(
            `INSERT INTO fleet.lb_fleet_requests
               (rule_id, kind, slot_at, requested_by, taken_by, taken_at)
             VALUES ($1, 'run-slot', $2, 'gone', 'gone', now() - interval '1 hour')`,
            [RULE, Date.parse(AT)],
          );
          await owner.bot.waitForLine(
            (l) =>
              l.msg === 'fleet request already carried out: the slot is completed' &&
              l.ruleId === RULE &&
              l.level === 30,
            15_000,
            'the owner finding the slot completed',
          );
          await waitFor(
            async () => (await db.query('SELECT id FROM fleet.lb_fleet_requests')).rows.length,
            (n) => n === 0,
            15_000,
            'the requests deleted once done',
          );
          expect(owner.bot.lines.filter(carried)).toHaveLength(2);
          expect((await countContracts(ledger)).seen).toBe(1);

          // Refused by the member asked, before anything is posted: an event rule the owner runs
          // (409), a rule the fleet does not have (404), an `at` that is not a time (400).
          const eventRule = statuses[ownerAt]!.running.find((id) => id !== RULE)!;
          const refused = await runSlot(other.port, eventRule, AT);
          expect(refused.status).toBe(409);
          expect(await refused.json()).toMatchObject({
            error: { message: `rule "${eventRule}" is an event rule, not a schedule rule` },
          });
          expect((await runSlot(other.port, 'no-such-rule', AT)).status).toBe(404);
          expect((await runSlot(other.port, RULE, 'yesterday')).status).toBe(400);
          expect((await db.query('SELECT id FROM fleet.lb_fleet_requests')).rows).toEqual([]);

          // The CLI's pause and resume of a rule the member it asks does not run: forwarded to the
          // owner (exit 0), which pauses and resumes the rule.
          const stateOnOwner = async (): Promise<string | undefined> => {
            const body = (await (await fetch(`http://127.0.0.1:${owner.port}/status`)).json()) as {
              rules: { id: string; state: string }[];
            };
            return body.rules.find((r) => r.id === eventRule)?.state;
          };
          for (const [action, state] of [
            ['pause', 'paused'],
            ['resume', 'active'],
          ] as const) {
            const r = await cli([action, eventRule, '--config', config]);
            expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: '' });
            expect(r.out).toBe(
              `${action} of rule ${eventRule} forwarded by the fleet member at http://127.0.0.1:${other.port} to the rule's owner (${ownerId}), which carries it out at its next round\n`,
            );
            await waitFor(
              stateOnOwner,
              (s) => s === state,
              15_000,
              `the owner: ${eventRule} ${state}`,
            );
          }

          for (const m of members) await m.bot.kill('SIGTERM');
          for (const m of members) expect(await m.bot.exited).toEqual({ code: 0, signal: null });
        }),
      180_000,
    );
  },
);
