import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
import { specValidator } from '../support/spec-validator.js';

const MODEL = fileURLToPath(new URL('./fixtures/chores.model.yaml', import.meta.url));
const CHORES = 1000;
const SLOT = Date.parse('2026-01-05T08:00:00Z');
const spec = specValidator('openapi-3.5');

let sandbox: Sandbox;
let client: LedgerClient;
let owner: string;
let rule: CompiledRule;
const dirs: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({
    models: [MODEL],
    parties: ['Owner'],
    users: ['bot:Owner'],
    seed: 11,
    limits: { checkpointIntervalMs: 100, listWaitMs: 100 },
  });
  owner = sandbox.parties.Owner!;
  client = await LedgerClient.create({ url: sandbox.url });
  for (let from = 0; from < CHORES; from += 200) {
    await client.submitAndWait({
      commands: Array.from({ length: 200 }, (_, i) => ({
        CreateCommand: {
          templateId: '#chores:Chore:Chore',
          createArguments: { owner, n: String(from + i) },
        },
      })),
      commandId: `setup-${from}`,
      actAs: [owner],
      userId: 'bot',
    });
  }
  rule = loadRulesOrThrow(
    [
      {
        path: 'chores.yaml',
        text: `
version: 1
rules:
  - id: chores-done
    schedule: { cron: "*/5 * * * * *" }
    forEach: { activeContracts: "#chores:Chore:Chore", party: owner }
    then:
      - exercise:
          template: "#chores:Chore:Chore"
          contractId: "\${{ contract.contractId }}"
          choice: MarkDone
          choiceArgument: { slot: "at \${{ now }}" }
        actAs: [owner]
    rateLimit: { perSecond: 5000, burst: 5000 }
    concurrency: 64
`,
      },
    ],
    { parties: { owner } },
  ).rules[0]!;
}, 60_000);

afterAll(async () => {
  await client?.close();
  await sandbox?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerbot-schedule-'));
  dirs.push(dir);
  return dir;
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
    submission: { maxInFlight: 64, completionTimeoutMs: 10_000 },
    streamBackoff: { initialMs: 50, maxMs: 500 },
    stopGraceMs: 5_000,
  });
}

/** Done contracts on the ledger for one slot: the effects of that slot. */
async function doneFor(slot: number): Promise<number> {
  const end = await client.ledgerEnd();
  let n = 0;
  const note = `at ${new Date(slot).toISOString()}`;
  for await (const element of client.activeContracts({
    activeAtOffset: end,
    eventFormat: eventFormat({ parties: [owner], templates: ['#chores:Chore:Done'] }),
  })) {
    const entry = element.contractEntry;
    if (entry !== undefined && 'JsActiveContract' in entry) {
      const args = entry.JsActiveContract.createdEvent.createArgument as { slot?: unknown };
      if (args.slot === note) n++;
    }
  }
  return n;
}

async function settled(store: Store, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (store.openIntents({ limit: 1 }).length > 0) {
    if (Date.now() > deadline) throw new Error('intents still open');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A sink that forwards to the bot and counts what it was handed. */
function countingSink(bot: Bot, seen: Intent[], failAfter = Infinity): SlotIntentSink {
  return {
    async submitIntents(intents, context) {
      if (seen.length >= failAfter) throw new Error('crash');
      seen.push(...intents);
      await bot.submitIntents(intents, context);
    },
  };
}

describe('schedule slots against the sandbox', () => {
  it(`a forEach over ${CHORES} contracts submits each action exactly once; a second run submits nothing new`, async () => {
    const store = openSqliteStore({ dir: stateDir() });
    const bot = newBot(store);
    await bot.start();
    try {
      const seen: Intent[] = [];
      const source = ledgerSlotSource(client, { mode: 'page', pageSize: 100 });
      const first = await runSlot(rule, SLOT, {
        source,
        sink: countingSink(bot, seen),
        journal: store,
        parties: { owner },
      });
      expect(first).toMatchObject({ contracts: CHORES, intents: CHORES, errorCount: 0 });
      spec.assert('Command', seen[0]!.command);
      await settled(store);
      expect(store.countByState()).toMatchObject({ succeeded: CHORES, duplicate: 0 });
      expect(store.getSlotRecord('chores-done')).toMatchObject({ lastCompletedSlot: SLOT });
      expect(bot.metrics.snapshot()).toMatchObject({ intentsRecorded: CHORES });
      expect(await doneFor(SLOT)).toBe(CHORES);

      // The same slot again (run-slot twice, a catch-up that repeats it): the journal knows
      // every commandId, so nothing is recorded or submitted again.
      const again = await runSlot(rule, SLOT, {
        source,
        sink: countingSink(bot, []),
        journal: store,
        parties: { owner },
      });
      expect(again.intents).toBe(CHORES);
      await settled(store);
      expect(bot.metrics.snapshot()).toMatchObject({ intentsRecorded: CHORES });
      expect(store.countByState()).toMatchObject({ succeeded: CHORES });
      expect(await doneFor(SLOT)).toBe(CHORES);
    } finally {
      await bot.stop();
      store.close();
    }
  }, 120_000);

  it('a restart mid-slot finishes the slot at the same snapshot, without duplicates', async () => {
    const slot = SLOT + 5_000;
    const dir = stateDir();
    // First process: records 300 intents, then "crashes" before the slot completes.
    let store = openSqliteStore({ dir });
    let bot = newBot(store);
    await bot.start();
    const seen: Intent[] = [];
    await expect(
      runSlot(rule, slot, {
        source: ledgerSlotSource(client),
        sink: countingSink(bot, seen, 300),
        journal: store,
        parties: { owner },
        batchSize: 100,
      }),
    ).rejects.toThrow('crash');
    const interrupted = store.getSlotRecord('chores-done');
    expect(interrupted).toMatchObject({ inProgressSlot: slot });
    await settled(store);
    await bot.stop();
    store.close();
    expect(await doneFor(slot)).toBe(300);

    // More contracts appear meanwhile: the resumed slot reads the snapshot it started with.
    await client.submitAndWait({
      commands: [
        {
          CreateCommand: {
            templateId: '#chores:Chore:Chore',
            createArguments: { owner, n: '5000' },
          },
        },
      ],
      commandId: 'late-chore',
      actAs: [owner],
      userId: 'bot',
    });

    // Second process, same state directory: the driver resumes the interrupted slot.
    store = openSqliteStore({ dir });
    bot = newBot(store);
    await bot.start();
    try {
      const resumed = await runSlot(rule, slot, {
        source: ledgerSlotSource(client),
        sink: countingSink(bot, []),
        journal: store,
        parties: { owner },
      });
      expect(resumed).toMatchObject({
        resumed: true,
        snapshotOffset: interrupted!.snapshotOffset,
        contracts: CHORES,
      });
      await settled(store);
      expect(store.getSlotRecord('chores-done')).toMatchObject({ lastCompletedSlot: slot });
      expect(store.countByState()).toMatchObject({ succeeded: CHORES });
      expect(await doneFor(slot)).toBe(CHORES);
    } finally {
      await bot.stop();
      store.close();
    }
  }, 120_000);
  it('a second replica with its own store that runs the same slot later adds no effect', async () => {
    // A slot near the participant's clock, so the dedup window back to it is one it accepts.
    const slot = Math.floor(Date.now() / 5_000) * 5_000;
    const run = async (store: Store): Promise<number> => {
      const bot = newBot(store);
      await bot.start();
      try {
        const r = await runSlot(rule, slot, {
          source: ledgerSlotSource(client),
          sink: countingSink(bot, []),
          journal: store,
          parties: { owner },
        });
        await settled(store);
        return r.intents;
      } finally {
        await bot.stop();
      }
    };
    const first = openSqliteStore({ dir: stateDir() });
    const second = openSqliteStore({ dir: stateDir() });
    try {
      const n = await run(first);
      expect(first.countByState()).toMatchObject({ succeeded: n, duplicate: 0 });
      // The second replica reads a later snapshot offset than the first one's completions,
      // so only a dedup window reaching back to the slot time stops its commands.
      expect(await run(second)).toBe(n);
      expect(second.countByState()).toMatchObject({ succeeded: 0, duplicate: n });
      expect(await doneFor(slot)).toBe(n);
    } finally {
      first.close();
      second.close();
    }
  }, 120_000);
});
