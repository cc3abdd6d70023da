import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readConfig } from '../../src/cli/compose/read-config.js';
import { startBot } from '../../src/cli/compose/start-bot.js';
import { silentLogger, type Logger } from '../../src/core/logger.js';
import { BotCatalogue } from '../../src/cli/compose/bot-catalogue.js';
import {
  RULE_CHECK_FILE,
  checkRulesOffline,
  offlineCheckStats,
} from '../../src/cli/compose/offline-rule-check.js';
import { ruleInputsKeyOf, type RuleInputs } from '../../src/cli/compose/rule-inputs-key.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { startTestLedger, type TestLedger } from '../integration/harness.js';
import { TestScope } from '../support/test-scope.js';

// `run` records in state.dir/rule-check.json the key of the inputs that passed the offline rule
// check; the next start with the same inputs skips that check and goes straight to the check
// against the participant's packages. Any change to the inputs, or a damaged record, runs it.

let scope: TestScope;
let dir: string;
let ledger: TestLedger;
beforeEach(async () => {
  scope = new TestScope();
  dir = scope.tempDir();
  ledger = scope.defer(await startTestLedger(15), () => ledger.close());
});
afterEach(() => scope.close());

const rules = (
  template = '#invoices:Payment:Payable',
  when = 'decimal("500")',
): string => `version: 1
rules:
  - id: accept-large-payables
    on: { created: '${template}', party: payer }
    when: decimal(event.view.amount) > ${when}
    then:
      - exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Accept }
        actAs: [payer]
`;

function writeConfig(extraParty = ''): void {
  writeFileSync(
    join(dir, 'bot.config.yaml'),
    [
      'ledger:',
      `  url: ${ledger.url}`,
      '  userId: ledgerbot',
      `parties: { issuer: '${ledger.parties.issuer}', payer: '${ledger.parties.payer}'${extraParty} }`,
      'rules: rules.yaml',
      'state: { dir: state }',
      '',
    ].join('\n'),
  );
}

/** Starts the bot, returns its rules as JSON and whether the offline check was skipped. */
async function startAndStop(): Promise<{ rules: string; skipped: boolean }> {
  const before = offlineCheckStats.skipped;
  const config = await readConfig(join(dir, 'bot.config.yaml'));
  const running = await startBot(config, silentLogger as never);
  try {
    return {
      rules: JSON.stringify(running.bot.rules),
      skipped: offlineCheckStats.skipped > before,
    };
  } finally {
    await running.close();
  }
}

describe('run: the record of the offline rule check', () => {
  it('skips the check for unchanged inputs, and runs it again after any change', async () => {
    writeFileSync(join(dir, 'rules.yaml'), rules());
    writeConfig();
    const first = await startAndStop();
    expect(first.skipped).toBe(false);
    const record = join(dir, 'state', RULE_CHECK_FILE);
    expect(existsSync(record)).toBe(true);
    const second = await startAndStop();
    expect(second).toEqual({ rules: first.rules, skipped: true });

    // A rule file edited: checked again, and then skipped again.
    writeFileSync(join(dir, 'rules.yaml'), rules(undefined, 'decimal("600")'));
    expect((await startAndStop()).skipped).toBe(false);
    expect((await startAndStop()).skipped).toBe(true);

    // A party added.
    writeConfig(`, auditor: '${ledger.parties.issuer}'`);
    expect((await startAndStop()).skipped).toBe(false);
    expect((await startAndStop()).skipped).toBe(true);

    // A damaged record: the check runs and the record is written again.
    const text = readFileSync(record, 'utf8');
    writeFileSync(record, text.slice(0, 20));
    expect((await startAndStop()).skipped).toBe(false);
    expect(readFileSync(record, 'utf8')).toBe(text);
  });

  it('does not record a check that failed: the error, located, every time', async () => {
    writeFileSync(join(dir, 'rules.yaml'), rules().replace('party: payer', 'party: nobody'));
    writeConfig();
    for (let i = 0; i < 2; i++) {
      const config = await readConfig(join(dir, 'bot.config.yaml'));
      const started = startBot(config, silentLogger as never);
      await expect(started).rejects.toThrow(UsageError);
      await expect(started).rejects.toThrow(/rules\.yaml:4:\d+/);
    }
    expect(existsSync(join(dir, 'state', RULE_CHECK_FILE))).toBe(false);
  });

  it('reports an error only the participant check finds, located, also when the offline check is skipped', async () => {
    // Without package files the offline check cannot know the template is missing.
    writeFileSync(join(dir, 'rules.yaml'), rules('#invoices:Payment:Missing'));
    writeConfig();
    const before = offlineCheckStats.skipped;
    for (let i = 0; i < 2; i++) {
      const config = await readConfig(join(dir, 'bot.config.yaml'));
      const started = startBot(config, silentLogger as never);
      await expect(started).rejects.toThrow(UsageError);
      await expect(started).rejects.toThrow(/rules\.yaml:4:\d+/);
    }
    expect(offlineCheckStats.skipped).toBe(before + 1);
  });
});

describe('checkRulesOffline', () => {
  it('a record that cannot be written is a warning: the rules are checked and returned', async () => {
    writeFileSync(join(dir, 'rules.yaml'), rules());
    writeConfig();
    // The state directory below a file: it cannot be made.
    writeFileSync(join(dir, 'state'), 'x');
    const config = await readConfig(join(dir, 'bot.config.yaml'));
    const warnings: { fields: Record<string, unknown>; msg: string }[] = [];
    const logger = {
      ...silentLogger,
      warn: (fields: Record<string, unknown>, msg: string) => warnings.push({ fields, msg }),
    } as unknown as Logger;
    const ruleSet = await checkRulesOffline(config, {
      catalogue: new BotCatalogue(config, silentLogger),
      version: '1.0.0',
      logger,
    });
    expect(ruleSet?.rules.map((r) => r.id)).toEqual(['accept-large-payables']);
    expect(warnings.map((w) => [w.msg, w.fields.file])).toEqual([
      [
        'offline rule check not recorded; the next start checks the rules again',
        join(dir, 'state', RULE_CHECK_FILE),
      ],
    ]);
    expect(warnings[0]?.fields.error).toMatch(/EEXIST|ENOTDIR/);
  });
});

describe('ruleInputsKeyOf', () => {
  const inputs: RuleInputs = {
    version: '1.0.0',
    files: [{ path: 'rules.yaml', text: 'version: 1\n' }],
    parties: { payer: 'p::1', issuer: 'i::1' },
    defaultRetry: { attempts: 3 },
    packageIds: ['b', 'a'],
    complete: false,
    models: [{ path: 'm.daml', text: 'template T' }],
  };
  const key = ruleInputsKeyOf(inputs);

  it('does not depend on the order of parties or package ids', () => {
    expect(
      ruleInputsKeyOf({
        ...inputs,
        parties: { issuer: 'i::1', payer: 'p::1' },
        packageIds: ['a', 'b'],
      }),
    ).toBe(key);
  });

  it('changes with every input the check reads', () => {
    const changed: Partial<RuleInputs>[] = [
      { version: '1.0.1' },
      { files: [{ path: 'rules.yaml', text: 'version: 1\n\n' }] },
      { files: [{ path: 'other.yaml', text: 'version: 1\n' }] },
      { parties: { payer: 'p::2', issuer: 'i::1' } },
      { defaultRetry: { attempts: 4 } },
      { packageIds: ['a', 'c'] },
      { complete: true },
      { models: [{ path: 'm.daml', text: 'template U' }] },
    ];
    for (const change of changed) expect(ruleInputsKeyOf({ ...inputs, ...change })).not.toBe(key);
  });
});
