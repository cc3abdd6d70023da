import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventFormat } from '../../src/ledger/filters.js';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import { loadRulesOrThrow } from '../../src/rules/load-rules.js';
import { createBot, type Bot } from '../../src/runtime/bot.js';
import type { StartPosition } from '../../src/runtime/config/bot-config.js';
import { RuntimeError } from '../../src/runtime/runtime-error.js';
import { startOffsetOf } from '../../src/runtime/start-offset.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/start-sandbox.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import { waitFor } from '../support/wait-for.js';
import { recordingLogger } from './bot-fixture.js';

describe('startOffsetOf', () => {
  const cases: [StartPosition, number | undefined, boolean, number, string][] = [
    [{ kind: 'checkpoint' }, undefined, false, 40, 'start'],
    [{ kind: 'ledger-end' }, undefined, false, 40, 'start'],
    [{ kind: 'begin' }, undefined, false, 0, 'start'],
    [{ kind: 'offset', offset: 7 }, undefined, false, 7, 'start'],
    // A checkpoint wins over every `start:`.
    [{ kind: 'checkpoint' }, 12, false, 12, 'checkpoint'],
    [{ kind: 'ledger-end' }, 12, false, 12, 'checkpoint'],
    [{ kind: 'begin' }, 12, false, 12, 'checkpoint'],
    [{ kind: 'offset', offset: 7 }, 12, false, 12, 'checkpoint'],
    // Unless it is reset on purpose.
    [{ kind: 'ledger-end' }, 12, true, 40, 'reset'],
    [{ kind: 'begin' }, 12, true, 0, 'reset'],
    [{ kind: 'offset', offset: 7 }, 12, true, 7, 'reset'],
    [{ kind: 'begin' }, undefined, true, 0, 'start'],
  ];
  it.each(cases)('%j, checkpoint %s, reset %s → %s (%s)', (start, cp, reset, offset, from) => {
    expect(startOffsetOf(start, cp, 40, reset)).toEqual({ offset, from, previous: cp });
  });

  it('refuses an offset beyond the ledger end', () => {
    expect(() => startOffsetOf({ kind: 'offset', offset: 41 }, undefined, 40)).toThrow(
      RuntimeError,
    );
    expect(() => startOffsetOf({ kind: 'offset', offset: 41 }, undefined, 40)).toThrow(
      /beyond the participant's ledger end 40/,
    );
    // A checkpoint does not care.
    expect(startOffsetOf({ kind: 'offset', offset: 41 }, 30, 40).offset).toBe(30);
  });

  it('refuses a checkpoint beyond the ledger end (another ledger, or a reset one) unless reset', () => {
    const thrown = (() => {
      try {
        startOffsetOf({ kind: 'ledger-end' }, 55, 40);
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(RuntimeError);
    expect((thrown as RuntimeError).code).toBe('CHECKPOINT_BEYOND_LEDGER_END');
    expect((thrown as Error).message).toMatch(
      /checkpoint 55 is beyond .* ledger end 40.*--reset-checkpoint/,
    );
    expect(startOffsetOf({ kind: 'ledger-end' }, 55, 40, true)).toEqual({
      offset: 40,
      from: 'reset',
      previous: 55,
    });
    expect(startOffsetOf({ kind: 'ledger-end' }, 40, 40).offset).toBe(40);
  });
});

const EXAMPLE = fileURLToPath(new URL('../../examples/invoices/', import.meta.url));
const RULES_DIR = join(EXAMPLE, 'rules');

let sandbox: Sandbox;
let client: LedgerClient;
let parties: { issuer: string; payer: string };
const dirs: string[] = [];
let running: Bot | undefined;
let n = 0;

beforeAll(async () => {
  sandbox = await startSandbox({
    models: [join(EXAMPLE, 'model.yaml')],
    parties: ['Issuer', 'Payer'],
    users: ['ledgerbot:Issuer,Payer'],
    seed: 13,
    limits: { checkpointIntervalMs: 100, listWaitMs: 100 },
  });
  parties = { issuer: sandbox.parties.Issuer!, payer: sandbox.parties.Payer! };
  client = await LedgerClient.create({ url: sandbox.url });
});

afterEach(async () => {
  await running?.stop();
  running = undefined;
});

afterAll(async () => {
  await client?.close();
  await sandbox?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function stateDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'ledgerbot-start-'));
  dirs.push(d);
  return d;
}

/** A bot on `dir` (a restart when the dir was used before), with its log lines. */
async function startBotOn(
  dir: string,
  start: StartPosition,
  resetCheckpoint = false,
): Promise<{ bot: Bot; startOffset: number; warnings: string[] }> {
  const files = readdirSync(RULES_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => ({ path: join(RULES_DIR, f), text: readFileSync(join(RULES_DIR, f), 'utf8') }));
  const logger = recordingLogger();
  const bot = createBot({
    rules: loadRulesOrThrow(files, { parties }),
    parties,
    userId: 'ledgerbot',
    ledger: client,
    store: openSqliteStore({ dir }),
    submission: { maxInFlight: 8, completionTimeoutMs: 5_000 },
    streamBackoff: { initialMs: 50, maxMs: 500 },
    stopGraceMs: 2_000,
    start,
    resetCheckpoint,
    logger,
  });
  running = bot;
  await bot.start();
  const line = logger.lines.find((l) => l.msg === 'bot starting');
  return {
    bot,
    startOffset: line?.fields.startOffset as number,
    warnings: logger.lines.filter((l) => l.level === 'warn').map((l) => l.msg),
  };
}

async function stop(bot: Bot): Promise<void> {
  await bot.stop();
  running = undefined;
}

async function createInvoice(): Promise<string> {
  const reference = `INV-S${++n}`;
  await client.submitAndWait({
    commands: [
      {
        CreateCommand: {
          templateId: '#invoices:Invoice:Invoice',
          createArguments: {
            issuer: parties.issuer,
            payer: parties.payer,
            amount: '250.00',
            currency: 'USD',
            due: '2026-03-01',
            reference,
          },
        },
      },
    ],
    commandId: `start-test-${reference}`,
    actAs: [parties.issuer],
    userId: 'ledgerbot',
  });
  return reference;
}

/** The references of the receipts on the ledger. */
async function receipts(): Promise<string[]> {
  const end = await client.ledgerEnd();
  const out: string[] = [];
  for await (const entry of client.activeContracts(
    {
      activeAtOffset: end,
      eventFormat: eventFormat({
        parties: [parties.issuer],
        templates: ['#invoices:Payment:Receipt'],
      }),
    },
    { mode: 'list' },
  )) {
    const c = entry.contractEntry;
    if (c !== undefined && 'JsActiveContract' in c) {
      out.push((c.JsActiveContract.createdEvent.createArgument as { reference: string }).reference);
    }
  }
  return out.sort();
}

async function settled(bot: Bot, references: string[]): Promise<void> {
  await waitFor(
    receipts,
    (have) => references.every((r) => have.includes(r)),
    10_000,
    `receipts for ${references.join(', ')}`,
  );
  await waitFor(
    () => bot.metrics.inFlight,
    (n) => n === 0,
    10_000,
    'no intent in flight',
  );
}

describe('start: against the sandbox, across restarts', () => {
  it('start: begin reads the ledger from 0 once; a restart resumes from the checkpoint', async () => {
    const dir = stateDir();
    const first = await createInvoice();
    const a = await startBotOn(dir, { kind: 'begin' });
    expect(a.startOffset).toBe(0);
    await settled(a.bot, [first]);
    const checkpoint = a.bot.checkpoint();
    await stop(a.bot);
    expect(checkpoint).toBeGreaterThan(0);

    const second = await createInvoice(); // while the bot is down
    const b = await startBotOn(dir, { kind: 'begin' });
    expect(b.startOffset).toBe(checkpoint); // not 0 again
    expect(b.startOffset).toBeGreaterThan(0);
    await settled(b.bot, [first, second]);
    expect(b.bot.metrics.intentTransitions['dead-lettered']).toBe(0);
    await stop(b.bot);
  }, 30_000);

  it('start: ledger-end on a quiet ledger: an event that comes while the bot is down is not skipped', async () => {
    const dir = stateDir();
    const a = await startBotOn(dir, { kind: 'ledger-end' });
    const end = await client.ledgerEnd();
    expect(a.startOffset).toBe(end);
    await stop(a.bot); // no event came: the start position is the checkpoint all the same

    const missed = await createInvoice();
    const b = await startBotOn(dir, { kind: 'ledger-end' });
    expect(b.startOffset).toBe(end);
    await settled(b.bot, [missed]);
    await stop(b.bot);
  }, 30_000);

  it('a reset begins at start: again, is stored at once, and replays nothing twice', async () => {
    const dir = stateDir();
    const first = await createInvoice();
    const a = await startBotOn(dir, { kind: 'begin' });
    await settled(a.bot, [first]);
    await stop(a.bot);
    const before = await receipts();

    // Reset to the beginning: the replay finds its intents in the journal.
    const b = await startBotOn(dir, { kind: 'begin' }, true);
    expect(b.startOffset).toBe(0);
    expect(b.warnings.some((w) => w.startsWith('checkpoint reset'))).toBe(true);
    await waitFor(
      () => b.bot.checkpoint() ?? 0,
      (c) => c > 0,
      10_000,
      'a checkpoint',
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(await receipts()).toEqual(before);
    expect(b.bot.metrics.snapshot().intentTransitions.pending).toBe(0);
    await stop(b.bot);

    // Reset to the ledger end, stop at once: the next start resumes there, not at the old
    // checkpoint, so what the reset skipped stays skipped.
    const skipped = await createInvoice();
    const c = await startBotOn(dir, { kind: 'ledger-end' }, true);
    const end = await client.ledgerEnd();
    expect(c.startOffset).toBe(end);
    await stop(c.bot);
    const d = await startBotOn(dir, { kind: 'ledger-end' });
    expect(d.startOffset).toBe(end);
    await new Promise((r) => setTimeout(r, 500));
    expect(await receipts()).not.toContain(skipped);
    await stop(d.bot);
  }, 40_000);
});
