import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeadLetterView } from '../../src/runtime/intent-view.js';
import { loadRulesOrThrow } from '../../src/rules/load-rules.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import {
  allTerminal,
  countContracts,
  seedTwoDeadLetters,
  startInProcessBot,
  startTestLedger,
  waitFor,
  type TestLedger,
  AUDIT_RULE_FEW_RETRIES,
} from './harness.js';
import { TestScope } from '../support/test-scope.js';
import { cli } from '../support/cli-capture.js';

let ledger: TestLedger;
const scope = new TestScope();
let tmp: string;
let config: string;
let stateDir: string;
let rulesFile: string;

function rules() {
  return loadRulesOrThrow([{ path: rulesFile, text: readFileSync(rulesFile, 'utf8') }], {
    parties: ledger.parties,
  });
}

async function deadLetters(): Promise<DeadLetterView[]> {
  const r = await cli(['dead-letters', 'list', '--config', config, '--json']);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as DeadLetterView[];
}

beforeAll(async () => {
  ledger = scope.own(await startTestLedger(7202));
  tmp = scope.tempDir('ledgerbot-cli-dead-letters-');
  stateDir = join(tmp, 'state');
  mkdirSync(join(tmp, 'rules'));
  rulesFile = join(tmp, 'rules', 'audit.yaml');
  writeFileSync(rulesFile, AUDIT_RULE_FEW_RETRIES);
  config = join(tmp, 'bot.config.yaml');
  writeFileSync(
    config,
    [
      'ledger:',
      `  url: ${ledger.url}`,
      '  userId: ledgerbot',
      'parties:',
      `  issuer: '${ledger.parties.issuer}'`,
      `  payer: '${ledger.parties.payer}'`,
      'rules: rules/',
      'state: { dir: state }',
      '',
    ].join('\n'),
  );
  // Every submission is turned away (retryable) until the retries run out: two dead letters.
  const states = await seedTwoDeadLetters(ledger, stateDir, rules());
  expect(states['dead-lettered']).toBe(2);
}, 60_000);

afterAll(() => scope.close());

describe('ledgerbot dead-letters, on the store while the bot is down', () => {
  it('lists them as a table', async () => {
    const r = await cli(['dead-letters', 'list', '--config', config]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`2 dead letter(s) (store ${stateDir})`);
    expect(r.out).toMatch(/DEAD-LETTERED AT\s+RULE\s+ATTEMPTS\s+OFFSET\s+COMMAND ID\s+ERROR/);
    expect(r.out.match(/audit-invoices\s+2\s+\d+\s+lb-audit-invoices-/g)).toHaveLength(2);
    expect(r.out).toContain('SEQUENCER_BACKPRESSURE');
    const none = await cli(['dead-letters', 'list', '--config', config, '--rule', 'other']);
    expect(none.out).toContain('0 dead letter(s)');
  });

  it('shows one: error, payload and triggering event', async () => {
    const [first] = await deadLetters();
    const r = await cli(['dead-letters', 'show', first!.commandId, '--config', config]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`dead letter ${first!.commandId}`);
    expect(r.out).toContain('rule        audit-invoices (revision 1)');
    expect(r.out).toContain('SEQUENCER_BACKPRESSURE');
    expect(r.out).toContain('"CreateCommand"');
    expect(r.out).toContain('triggering event:');
    // The suggested commands work when pasted: --config as given.
    expect(r.out).toContain(
      `retry: ledgerbot dead-letters retry ${first!.commandId} --config ${config}\n`,
    );
    expect(r.out).toContain(
      `drop:  ledgerbot dead-letters drop ${first!.commandId} --config ${config}\n`,
    );
    const json = await cli([
      'dead-letters',
      'show',
      first!.commandId,
      '--config',
      config,
      '--json',
    ]);
    const view = JSON.parse(json.out) as DeadLetterView;
    expect(view).toMatchObject({
      commandId: first!.commandId,
      ruleId: 'audit-invoices',
      attempts: 2,
    });
    expect(view.payload).toMatchObject({ version: 1, actAs: [ledger.parties.issuer] });
  });

  it('while a bot holds the store: list and show read it, retry and drop are refused naming the missing http section', async () => {
    const held = openSqliteStore({ dir: stateDir, exclusive: true });
    try {
      const r = await cli(['dead-letters', 'list', '--config', config]);
      expect(r.err).toBe('');
      expect(r.out).toContain(`2 dead letter(s) (store ${stateDir})`);
      const [first] = await deadLetters();
      for (const action of ['retry', 'drop']) {
        const w = await cli(['dead-letters', action, first!.commandId, '--config', config]);
        expect(w.code, action).toBe(1);
        expect(w.err).toContain('in use by a running ledgerbot');
        expect(w.err).toContain('has no http section');
        expect(w.err).toContain('[STORE_LOCKED]');
      }
      expect(await deadLetters()).toHaveLength(2);
    } finally {
      held.close();
    }
  });

  it(
    'retry: the next start submits it under the same commandId and it lands once; drop: never',
    { timeout: 60_000 },
    async () => {
      const letters = await deadLetters();
      expect(letters).toHaveLength(2);
      const [retried, dropped] = letters as [DeadLetterView, DeadLetterView];
      const r = await cli(['dead-letters', 'retry', retried.commandId, '--config', config]);
      expect(r.code).toBe(0);
      expect(r.out).toContain('when it starts');
      const d = await cli(['dead-letters', 'drop', dropped.commandId, '--config', config]);
      expect(d.code).toBe(0);
      expect(await deadLetters()).toEqual([]);
      // Gone is gone: a second retry or drop finds nothing (exit 1).
      const again = await cli(['dead-letters', 'retry', dropped.commandId, '--config', config]);
      expect(again.code).toBe(1);
      expect(again.err).toContain(`there is no dead letter ${dropped.commandId}`);
      expect((await countContracts(ledger)).seen).toBe(0);

      const bot = await startInProcessBot(ledger, { stateDir, seed: 5, rules: rules() });
      try {
        await waitFor(
          () => countContracts(ledger),
          (c) => c.seen >= 1,
          20_000,
          'the retried audit',
        );
        await waitFor(() => bot.states(), allTerminal, 10_000, 'all terminal');
        const record = bot.store.getIntent(retried.commandId);
        expect(record?.state).toBe('succeeded');
        expect(bot.store.getIntent(dropped.commandId)).toBeUndefined();
      } finally {
        await bot.stop();
      }
      // Landed exactly once, and the dropped one never.
      const counts = await countContracts(ledger);
      expect(counts.seen).toBe(1);
      expect(counts.duplicates).toEqual([]);
    },
  );

  it('bad arguments exit 2', async () => {
    for (const args of [
      [],
      ['bogus'],
      ['show'],
      ['retry'],
      ['list', 'extra'],
      ['show', 'a', 'b'],
      ['list', '--limit', '0'],
      ['list', '--nope'],
    ]) {
      const r = await cli(['dead-letters', ...args, '--config', config]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toMatch(/^ledgerbot: /);
    }
  });
});
