import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BacktestReport } from '../../src/cli/commands/backtest-command.js';
import { FRESH_SUBMISSION_ID } from '../../src/cli/present/would-submit.js';
import { specValidator } from '../support/spec-validator.js';
import { writeBotConfig } from './child-bot.js';
import {
  expectedEffects,
  issueInvoices,
  startInProcessBot,
  startTestLedger,
  waitForEffects,
  type InvoiceSpec,
  type TestLedger,
} from './harness.js';
import { TestScope, withScope } from '../support/test-scope.js';
import { cli } from '../support/cli-capture.js';

/**
 * A known history: the bot handles A-1 (small, accepted and settled) and A-2 (large: audited
 * only), then stops; B-1 (small) arrives while it is down. Replaying everything, the rules would
 * submit 6 commands: 4 already on the ledger (audit A-1, audit A-2, accept A-1, settle A-1) and
 * 2 not (audit B-1, accept B-1).
 */
const HANDLED: InvoiceSpec[] = [
  { reference: 'A-1', amount: '100.00', currency: 'USD' },
  { reference: 'A-2', amount: '5000.00', currency: 'USD' },
];
const MISSED: InvoiceSpec[] = [{ reference: 'B-1', amount: '50.00', currency: 'USD' }];

let ledger: TestLedger;
const scope = new TestScope();
let tmp: string;
let config: string;
let end: number;

async function report(from: number, to: number): Promise<BacktestReport> {
  const r = await cli([
    'backtest',
    '--config',
    config,
    '--from',
    `${from}`,
    '--to',
    `${to}`,
    '--json',
  ]);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as BacktestReport;
}

beforeAll(async () => {
  ledger = scope.own(await startTestLedger(7101));
  tmp = scope.tempDir('ledgerbot-cli-replay-');
  config = writeBotConfig(ledger, tmp, { stateDir: join(tmp, 'state') });
  await withScope(async (handling) => {
    handling.own(await startInProcessBot(ledger, { stateDir: join(tmp, 'state'), seed: 1 }));
    await issueInvoices(ledger, HANDLED);
    await waitForEffects(ledger, expectedEffects(HANDLED));
  });
  await issueInvoices(ledger, MISSED);
  end = await ledger.client.ledgerEnd();
}, 60_000);

afterAll(() => scope.close());

describe('ledgerbot backtest', () => {
  it('replays the whole history: what would fire, and what is already on the ledger', async () => {
    const r = await report(1, end);
    expect(r.summary).toEqual({ commands: 6, onLedger: 4, rejected: 0, absent: 2 });
    expect(r.rules['accept-small-invoices']).toEqual({
      matched: 3,
      fired: 2,
      conditionsFalse: 1,
      errors: 0,
      commands: 2,
    });
    expect(r.rules['audit-invoices']).toMatchObject({ matched: 3, fired: 3, commands: 3 });
    expect(r.rules['settle-accepted-invoices']).toMatchObject({
      matched: 1,
      fired: 1,
      commands: 1,
    });
    const absent = r.commands.filter((c) => c.status === 'absent').map((c) => c.ruleId);
    expect(absent.sort()).toEqual(['accept-small-invoices', 'audit-invoices']);
    // The missed ones are the last invoice's: everything before the bot stopped landed.
    const lastOffset = Math.max(...r.commands.map((c) => c.offset));
    for (const c of r.commands) {
      expect(c.status).toBe(c.offset === lastOffset ? 'absent' : 'on-ledger');
      expect(c.commandId).toMatch(/^lb-/);
    }
    expect(r.ruleErrors).toEqual([]);
  });

  it('prints one line per command and a summary line', async () => {
    const r = await cli(['backtest', '--config', config, '--from', '1', '--to', `${end}`]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      '6 command(s) would have been submitted: 4 already on the ledger, 0 rejected, 2 not on the ledger',
    );
    expect(r.out.match(/: already on the ledger \(completion at offset \d+\)/g)).toHaveLength(4);
    expect(r.out.match(/: NOT on the ledger/g)).toHaveLength(2);
    expect(r.out).toContain('accept-small-invoices: 3 matched, 2 fired, 1 conditions false');
  });

  it('replays only the range asked for, in pages', async () => {
    const all = await report(1, end);
    const last = Math.max(...all.commands.map((c) => c.offset));
    const tail = await report(last, end);
    expect(tail.summary).toEqual({ commands: 2, onLedger: 0, rejected: 0, absent: 2 });
    const head = await report(1, last - 1);
    expect(head.summary).toEqual({ commands: 4, onLedger: 4, rejected: 0, absent: 0 });
  });

  it('bad arguments exit 2 and submit nothing', async () => {
    for (const args of [
      ['--from', '5'],
      ['--from', '9', '--to', '3'],
      ['--from', 'x', '--to', '3'],
      ['--from', '1', '--to', `${end + 100}`],
      ['--from', '1', '--to', '2', '--bogus'],
    ]) {
      const r = await cli(['backtest', '--config', config, ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toMatch(/^ledgerbot: /);
    }
    expect(await ledger.client.ledgerEnd()).toBe(end);
  });
});

describe('ledgerbot explain', () => {
  it('a fired rule: every condition, and the command it would submit (valid JsCommands)', async () => {
    const missed = (await report(1, end)).commands.find((c) => c.status === 'absent')!;
    const r = await cli(['explain', '--config', config, '--update-id', missed.updateId]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`update ${missed.updateId} at offset ${missed.offset}`);
    expect(r.out).toMatch(/accept-small-invoices \(.*accept-small-invoices\.yaml:\d+:\d+\): fired/);
    expect(r.out).toContain(
      'when[2] decimal(event.createArgument.amount) < decimal("1000") → true',
    );
    expect(r.out).toMatch(/audit-invoices \(.*\): fired/);
    // A rule on another event kind says why it did not match.
    expect(r.out).toMatch(
      /settle-accepted-invoices \(.*\): not matched: the rule reacts to exercised events/,
    );
    expect(r.out).toContain(
      '2 rule(s) fired, 2 command(s) would be submitted, 0 rule error(s); nothing was submitted',
    );
    const blocks = jsonBlocks(r.out);
    expect(blocks).toHaveLength(2);
    const validator = specValidator('openapi-3.5');
    for (const block of blocks) {
      const commands = block as { submissionId: string; commandId: string };
      expect(commands.submissionId).toBe(FRESH_SUBMISSION_ID);
      validator.assert('JsCommands', { ...commands, submissionId: 'a-real-one' });
    }
    expect(blocks.map((b) => (b as { commandId: string }).commandId).sort()).toEqual(
      (await report(1, end)).commands
        .filter((c) => c.status === 'absent')
        .map((c) => c.commandId)
        .sort(),
    );
    expect(await ledger.client.ledgerEnd()).toBe(end);
  });

  it('a rule whose condition is false: which one, and nothing to submit', async () => {
    // The large invoice's create: audit fires, accept does not (amount ≥ 1000).
    const { commands } = await report(1, end);
    const accepted = new Set(
      commands.filter((c) => c.ruleId === 'accept-small-invoices').map((c) => c.updateId),
    );
    const largeCreate = commands.find(
      (c) => c.ruleId === 'audit-invoices' && !accepted.has(c.updateId),
    );
    expect(largeCreate).toBeDefined();
    const r = await cli(['explain', '--config', config, '--update-id', largeCreate!.updateId]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/accept-small-invoices \(.*\): not fired\n/);
    expect(r.out).toContain(
      'when[2] decimal(event.createArgument.amount) < decimal("1000") → false',
    );
    expect(r.out).toContain('1 rule(s) fired, 1 command(s) would be submitted');
  });

  it('an unknown update exits 1 with the reason; bad arguments exit 2', async () => {
    const r = await cli(['explain', '--config', config, '--update-id', 'no-such-update']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('update no-such-update was not found');
    expect((await cli(['explain', '--config', config])).code).toBe(2);
    expect((await cli(['explain', '--config', config, '--update-id', 'x', '--nope'])).code).toBe(2);
    const embedded = join(tmp, 'embedded.yaml');
    writeFileSync(
      embedded,
      `ledger:\n  embedded: { models: ['${join(tmp, 'none.yaml')}'], parties: [issuer, payer] }\n  userId: ledgerbot\nrules: ['${join(tmp, 'none')}']\n`,
    );
    const e = await cli(['explain', '--config', embedded, '--update-id', 'x']);
    expect(e.code).toBe(2);
    expect(e.err).toContain('embedded sandbox');
  });
});

/** The pretty JSON blocks explain prints under "would submit" (indented by 6). */
function jsonBlocks(out: string): unknown[] {
  const blocks: unknown[] = [];
  const lines = out.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '      {') continue;
    const end = lines.indexOf('      }', i);
    blocks.push(JSON.parse(lines.slice(i, end + 1).join('\n')));
    i = end;
  }
  return blocks;
}
