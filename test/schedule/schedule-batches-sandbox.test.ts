import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventFormat } from '../../src/ledger/filters.js';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import type { CompiledRule } from '../../src/rules/compiled-rule.js';
import type { Intent } from '../../src/rules/evaluation-result.js';
import { loadRulesOrThrow } from '../../src/rules/load-rules.js';
import { createBot, type Bot } from '../../src/runtime/bot.js';
import { ledgerSlotSource } from '../../src/runtime/ledger-slot-source.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/start-sandbox.js';
import { runSlot, type SlotIntentSink } from '../../src/schedule/run-slot.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { TestScope } from '../support/test-scope.js';
import { waitFor } from '../support/wait-for.js';

// forEach.batch against the sandbox: the active contracts come in pages of 50, batches of 64
// span them; a slot interrupted after its first batch resumes at the same snapshot and makes the
// same batches, so each batch's command takes effect once.

const MODEL = fileURLToPath(new URL('./fixtures/chores.model.yaml', import.meta.url));
const CHORES = 300;
const SLOT = Date.parse('2026-01-05T08:00:00Z');

let scope: TestScope;
let sandbox: Sandbox;
let client: LedgerClient;
let owner: string;
let rule: CompiledRule;

beforeAll(async () => {
  scope = new TestScope();
  sandbox = await startSandbox({
    models: [MODEL],
    parties: ['Owner'],
    users: ['bot:Owner'],
    seed: 5,
  });
  owner = sandbox.parties.Owner!;
  client = await LedgerClient.create({ url: sandbox.url });
  await client.submitAndWait({
    commands: Array.from({ length: CHORES }, (_, i) => ({
      CreateCommand: {
        templateId: '#chores:Chore:Chore',
        createArguments: { owner, n: String(i) },
      },
    })),
    commandId: 'setup',
    actAs: [owner],
    userId: 'bot',
  });
  // Every chore but each tenth: 270 picked, batches of 64 (4 × 64 + 14; the 14 are below min).
  rule = loadRulesOrThrow(
    [
      {
        path: 'batches.yaml',
        text: `
version: 1
rules:
  - id: chores-in-batches
    schedule: { cron: "0 9 * * *" }
    forEach:
      activeContracts: "#chores:Chore:Chore"
      party: owner
      batch: { size: 64, min: 20 }
    when: int(contract.createArgument.n) % 10 != 0
    then:
      - create:
          template: "#chores:Chore:Done"
          createArguments:
            owner: "\${{ parties.owner }}"
            n: "\${{ size(contracts) }}"
            slot: "batch from \${{ contracts[0].createArgument.n }} to \${{ contracts[size(contracts) - 1].createArgument.n }}"
        actAs: [owner]
`,
      },
    ],
    { parties: { owner } },
  ).rules[0]!;
}, 60_000);

afterAll(async () => {
  await client?.close();
  await sandbox?.stop();
  await scope?.close();
});

/** The Done contracts the batches left: [size, "batch from a to b"], in ledger order. */
async function batchesDone(): Promise<[number, string][]> {
  const out: [number, string][] = [];
  for await (const element of client.activeContracts({
    activeAtOffset: await client.ledgerEnd(),
    eventFormat: eventFormat({ parties: [owner], templates: ['#chores:Chore:Done'] }),
  })) {
    const entry = element.contractEntry;
    if (entry !== undefined && 'JsActiveContract' in entry) {
      const a = entry.JsActiveContract.createdEvent.createArgument as { n: string; slot: string };
      out.push([Number(a.n), a.slot]);
    }
  }
  return out;
}

function newBot(store: Store): Bot {
  return createBot({
    rules: { rules: [rule], warnings: [] },
    parties: { owner },
    userId: 'bot',
    ledger: client,
    store,
    closeStore: false,
    schedule: { drive: false },
    submission: { maxInFlight: 8, completionTimeoutMs: 10_000 },
    streamBackoff: { initialMs: 50, maxMs: 500 },
    stopGraceMs: 5_000,
  });
}

/** Forwards to the bot; throws (a crash) once `failAfter` intents went through. */
function sink(bot: Bot, seen: Intent[], failAfter = Infinity): SlotIntentSink {
  return {
    async submitIntents(intents, context) {
      if (seen.length >= failAfter) throw new Error('crash');
      seen.push(...intents);
      await bot.submitIntents(intents, context);
    },
  };
}

describe('forEach.batch against the sandbox', () => {
  it('batches span the pages of the active contracts; a resumed slot makes the same batches, each done once', async () => {
    const dir = scope.tempDir('ledgerbot-batches-');
    const source = ledgerSlotSource(client, { mode: 'page', pageSize: 50 });
    const expected: [number, string][] = [
      [64, 'batch from 1 to 71'],
      [64, 'batch from 72 to 142'],
      [64, 'batch from 143 to 213'],
      [64, 'batch from 214 to 284'],
    ];

    // First process: the first batch is recorded and submitted, then it crashes.
    let store = openSqliteStore({ dir });
    let bot = newBot(store);
    await bot.start();
    const first: Intent[] = [];
    await expect(
      runSlot(rule, SLOT, {
        source,
        sink: sink(bot, first, 1),
        journal: store,
        parties: { owner },
        batchSize: 1,
      }),
    ).rejects.toThrow('crash');
    const interrupted = store.getSlotRecord('chores-in-batches');
    expect(interrupted).toMatchObject({ inProgressSlot: SLOT });
    await waitFor(
      () => batchesDone(),
      (done) => done.length === 1,
      20_000,
      'the first batch done',
    );
    await bot.stop();
    store.close();
    expect(await batchesDone()).toEqual(expected.slice(0, 1));

    // A chore created meanwhile is not in the snapshot the slot resumes at.
    await client.submitAndWait({
      commands: [
        {
          CreateCommand: {
            templateId: '#chores:Chore:Chore',
            createArguments: { owner, n: '999' },
          },
        },
      ],
      commandId: 'late',
      actAs: [owner],
      userId: 'bot',
    });

    // Second process: the slot again, at its recorded offset: the same four batches, the
    // first one's command id already in the journal.
    store = openSqliteStore({ dir });
    bot = newBot(store);
    await bot.start();
    try {
      const again: Intent[] = [];
      const resumed = await runSlot(rule, SLOT, {
        source,
        sink: sink(bot, again),
        journal: store,
        parties: { owner },
      });
      expect(resumed).toMatchObject({
        resumed: true,
        snapshotOffset: interrupted!.snapshotOffset,
        contracts: CHORES,
        intents: 4,
        errorCount: 0,
      });
      expect(again[0]!.commandId).toBe(first[0]!.commandId);
      await waitFor(
        () => Promise.resolve(store.openIntents({ limit: 1 }).length),
        (open) => open === 0,
        20_000,
        'every intent terminal',
      );
      expect(store.countByState()).toMatchObject({ succeeded: 4 });
      expect(await batchesDone()).toEqual(expected);
      expect(store.getSlotRecord('chores-in-batches')).toMatchObject({ lastCompletedSlot: SLOT });
    } finally {
      await bot.stop();
      store.close();
    }
  }, 60_000);
});
