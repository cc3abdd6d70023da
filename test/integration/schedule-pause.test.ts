import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventFormat } from '../../src/ledger/filters.js';
import { loadRulesOrThrow } from '../../src/rules/load-rules.js';
import { manualSlotRunner } from '../../src/runtime/ops/manual-slot.js';
import type { OpsServer } from '../../src/runtime/ops/ops-server.js';
import { TestScope, withScope } from '../support/test-scope.js';
import { waitFor } from '../support/wait-for.js';
import {
  allTerminal,
  SEEN,
  startBotOps,
  startInProcessBot,
  startTestLedger,
  type InProcessBot,
  type TestLedger,
} from './harness.js';

// Issue 18: pausing a schedule rule through the ops API stops its slots at once; resumed, the
// slots it missed go to its catch-up policy (here `all` with maxCatchUp 2: the on-time latest
// slot and the two before it), as after downtime. A slot run by hand while it is paused runs.

const RULE = 'stamp';
const STAMP = `version: 1
rules:
  - id: ${RULE}
    schedule: { cron: '*/2 * * * * *', timezone: UTC, catchUp: all, maxCatchUp: 2 }
    then:
      - create:
          template: '${SEEN}'
          createArguments:
            owner: '\${{ parties.issuer }}'
            reference: 'slot \${{ now }}'
            amount: '1.00'
        actAs: [issuer]
`;
const TOKEN = 'ops-token-schedule-pause';
const SLOT_MS = 2_000;

let ledger: TestLedger;
const suite = new TestScope();

beforeAll(async () => {
  ledger = suite.own(await startTestLedger(7311));
}, 30_000);

afterAll(() => suite.close());

async function post(ops: OpsServer, path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${ops.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  const body: unknown = await res.json();
  return { status: res.status, body };
}

/** The slots (epoch ms) with a Seen on the ledger, ascending; each slot once. */
async function slotsOnLedger(): Promise<number[]> {
  const refs: string[] = [];
  const end = await ledger.client.ledgerEnd();
  for await (const element of ledger.client.activeContracts({
    activeAtOffset: end,
    eventFormat: eventFormat({ parties: [ledger.parties.issuer], templates: [SEEN] }),
  })) {
    const entry = element.contractEntry;
    if (entry === undefined || !('JsActiveContract' in entry)) continue;
    const args = entry.JsActiveContract.createdEvent.createArgument as { reference?: string };
    if (args.reference?.startsWith('slot ') === true) refs.push(args.reference);
  }
  expect(new Set(refs).size).toBe(refs.length);
  return refs.map((r) => Date.parse(r.slice('slot '.length))).sort((a, b) => a - b);
}

function lastCompleted(bot: InProcessBot): number | undefined {
  return bot.store.getSlotRecord(RULE)?.lastCompletedSlot;
}

describe('pausing a schedule rule through the ops API', () => {
  it(
    'fires no slot while paused, runs a slot asked by hand, and on resume runs the missed slots its catch-up policy keeps',
    () =>
      withScope(async (scope) => {
        const rules = loadRulesOrThrow([{ path: 'stamp.yaml', text: STAMP }], {
          parties: ledger.parties,
        });
        const bot = scope.own(
          await startInProcessBot(ledger, {
            stateDir: scope.tempDir('ledgerbot-schedule-pause-'),
            seed: 1,
            rules,
            start: { kind: 'ledger-end' },
          }),
        );
        const ops = scope.own(
          await startBotOps(bot, {
            token: TOKEN,
            runSlot: manualSlotRunner({
              bot: bot.bot,
              ledger: bot.client,
              parties: ledger.parties,
              journal: bot.store,
            }),
          }),
        );
        const driver = (): NonNullable<typeof bot.bot.schedules> => bot.bot.schedules!;
        await waitFor(
          () => lastCompleted(bot),
          (s) => s !== undefined,
          20_000,
          'a first slot',
        );

        expect(await post(ops, `/rules/${RULE}/pause`)).toMatchObject({
          status: 200,
          body: { rule: { id: RULE, state: 'paused' } },
        });
        // A slot already running when the pause came finishes; none starts after it.
        await waitFor(
          () => driver().stats()[0]!.running,
          (r) => !r,
          20_000,
          'the slot to end',
        );
        const before = lastCompleted(bot)!;
        const runBefore = driver().stats()[0]!.slotsRun;
        await new Promise((resolve) => setTimeout(resolve, 4 * SLOT_MS + 500));
        expect(lastCompleted(bot)).toBe(before);
        expect(driver().stats()[0]!.slotsRun).toBe(runBefore);

        // run-slot is an operator's explicit action: it runs while the rule is paused.
        const byHand = await post(ops, `/rules/${RULE}/run-slot`);
        expect(byHand.status).toBe(200);
        const manual = Date.parse((byHand.body as { slot: string }).slot);
        expect(manual).toBeGreaterThan(before + SLOT_MS); // slots were due meanwhile
        await new Promise((resolve) => setTimeout(resolve, 4 * SLOT_MS + 500));
        expect(driver().stats()[0]!.slotsRun).toBe(runBefore);

        const resumedAt = Date.now();
        expect(await post(ops, `/rules/${RULE}/resume`)).toMatchObject({ status: 200 });
        await waitFor(
          () => driver().stats()[0]!.slotsRun,
          (n) => n >= runBefore + 3,
          20_000,
          'the catch-up',
        );
        const skipped = driver().stats()[0]!.skippedMisfire;
        await post(ops, `/rules/${RULE}/pause`); // no more slots while the ledger is read
        await waitFor(() => bot.states(), allTerminal, 20_000, 'the intents to settle');
        const after = (await slotsOnLedger()).filter((s) => s > before);
        // The slot run by hand, then the catch-up: the three latest slots at the resume (the
        // on-time one and maxCatchUp before it), consecutive; the ones between were left out.
        expect(after[0]).toBe(manual);
        const caughtUp = after.slice(1, 4);
        expect(caughtUp).toHaveLength(3);
        expect(caughtUp[1]! - caughtUp[0]!).toBe(SLOT_MS);
        expect(caughtUp[2]! - caughtUp[1]!).toBe(SLOT_MS);
        expect(caughtUp[0]).toBeGreaterThan(manual + SLOT_MS);
        expect(caughtUp[2]).toBeLessThanOrEqual(resumedAt + SLOT_MS);
        expect(skipped).toBeGreaterThanOrEqual(1);
      }),
    90_000,
  );
});
