import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readConfig } from '../../src/cli/compose/read-config.js';
import { startBot } from '../../src/cli/compose/start-bot.js';
import { silentLogger } from '../../src/core/logger.js';
import { COMPILED_RULES_FILE } from '../../src/cli/compose/compiled-rules-file.js';
import { RULE_CACHE_FILE } from '../../src/cli/compose/rule-cache-file.js';
import { startTestLedger, type TestLedger } from '../integration/harness.js';
import { TestScope } from '../support/test-scope.js';

// `run` keeps the checked rule files in state.dir/rule-cache.json: the next start with the same
// files reads them from there and compiles the same rules (checked against the participant's
// packages as before); a damaged cache is ignored and written again.

let scope: TestScope;
let dir: string;
let ledger: TestLedger;
beforeEach(async () => {
  scope = new TestScope();
  dir = scope.tempDir();
  ledger = scope.defer(await startTestLedger(15), () => ledger.close());
});
afterEach(() => scope.close());

const RULES = `version: 1
rules:
  - id: accept-large-payables
    on: { created: '#invoices:Payment:Payable', party: payer }
    when: decimal(event.view.amount) > decimal("500")
    then:
      - exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Accept }
        actAs: [payer]
`;

/** Starts the bot of the test's config, returns its compiled rules as JSON, and stops it. */
async function startAndStop(): Promise<string> {
  const config = await readConfig(join(dir, 'bot.config.yaml'));
  const running = await startBot(config, silentLogger as never);
  try {
    return JSON.stringify(running.bot.rules);
  } finally {
    await running.close();
  }
}

describe('run: the rule cache in the state directory', () => {
  it('is written at the first start, and gives the same rules at the next', async () => {
    writeFileSync(join(dir, 'rules.yaml'), RULES);
    writeFileSync(
      join(dir, 'bot.config.yaml'),
      [
        'ledger:',
        `  url: ${ledger.url}`,
        '  userId: ledgerbot',
        `parties: { issuer: '${ledger.parties.issuer}', payer: '${ledger.parties.payer}' }`,
        'rules: rules.yaml',
        'state: { dir: state }',
        '',
      ].join('\n'),
    );
    const first = await startAndStop();
    // Known as an interface only from the participant's packages.
    expect(first).toContain('"refKind":"interface"');
    const file = join(dir, 'state', RULE_CACHE_FILE);
    const cached = readFileSync(file, 'utf8');
    expect(cached.split('\n')[0]).toContain('"format":"ledgerbot-rule-cache/1"');
    expect(await startAndStop()).toBe(first);
    // Unchanged files: the cache is not written again.
    expect(readFileSync(file, 'utf8')).toBe(cached);

    // Damaged: ignored, the rules are read from the files, the cache is written again (without
    // the compiled rules, which a start of unchanged inputs takes instead of the files).
    rmSync(join(dir, 'state', COMPILED_RULES_FILE));
    writeFileSync(file, cached.slice(0, cached.length - 40));
    expect(await startAndStop()).toBe(first);
    expect(readFileSync(file, 'utf8')).toBe(cached);
  });
});
