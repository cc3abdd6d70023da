import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { COMPILED_RULES_FILE } from '../../src/cli/compose/compiled-rules-file.js';
import { readConfig } from '../../src/cli/compose/read-config.js';
import { RULE_CACHE_FILE } from '../../src/cli/compose/rule-cache-file.js';
import { startBot } from '../../src/cli/compose/start-bot.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { silentLogger } from '../../src/core/logger.js';
import { startTestLedger, type TestLedger } from '../integration/harness.js';
import { TestScope } from '../support/test-scope.js';

// `run` keeps the rule set it compiled in state.dir/compiled-rules.json (written at the stop, or
// a while after the start): the next start with the same inputs takes it instead of compiling;
// any other input compiles again, a damaged file is ignored with a warning and written again,
// and a rule error is reported by compiling, cache or not.

let scope: TestScope;
let dir: string;
let ledger: TestLedger;
beforeEach(async () => {
  scope = new TestScope();
  dir = scope.tempDir();
  ledger = scope.defer(await startTestLedger(15), () => ledger.close());
});
afterEach(() => scope.close());

const rules = (threshold = '500', party = 'payer'): string => `version: 1
rules:
  - id: accept-large-payables
    on: { created: '#invoices:Payment:Payable', party: ${party} }
    when: decimal(event.view.amount) > decimal("${threshold}")
    then:
      - exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Accept }
        actAs: [${party}]
`;

function writeConfig(parties = `payer: '${ledger.parties.payer}'`, state = 'state'): void {
  writeFileSync(
    join(dir, 'bot.config.yaml'),
    [
      'ledger:',
      `  url: ${ledger.url}`,
      '  userId: ledgerbot',
      `parties: { issuer: '${ledger.parties.issuer}', ${parties} }`,
      'rules: rules.yaml',
      `state: { dir: ${state} }`,
      '',
    ].join('\n'),
  );
}

type Warning = { msg: string; why: unknown };

/** Starts the bot, returns its rules as JSON and the warnings logged, and stops it. */
async function startAndStop(): Promise<{ rules: string; warnings: Warning[] }> {
  const warnings: Warning[] = [];
  const logger = {
    ...silentLogger,
    warn: (fields: Record<string, unknown>, msg: string) => warnings.push({ msg, why: fields.why }),
    child: () => logger,
  };
  const config = await readConfig(join(dir, 'bot.config.yaml'));
  const running = await startBot(config, logger as never);
  try {
    return { rules: JSON.stringify(running.bot.rules), warnings };
  } finally {
    await running.close();
  }
}

const compiledFile = (): string => join(dir, 'state', COMPILED_RULES_FILE);
const headerKey = (): unknown =>
  (JSON.parse(readFileSync(compiledFile(), 'utf8').split('\n')[0]!) as { key: unknown }).key;

describe('run: the compiled rules in the state directory', () => {
  it('are written at the stop and taken, as they were, by the next start of the same inputs', async () => {
    writeFileSync(join(dir, 'rules.yaml'), rules());
    writeConfig();
    const first = await startAndStop();
    // Known as an interface only from the participant's packages.
    expect(first.rules).toContain('"refKind":"interface"');
    expect(existsSync(compiledFile())).toBe(true);
    const key = headerKey();

    // Taken from there: the rule files' checked form is not even read (nor written again).
    rmSync(join(dir, 'state', RULE_CACHE_FILE));
    const second = await startAndStop();
    expect(second).toEqual({ rules: first.rules, warnings: [] });
    expect(existsSync(join(dir, 'state', RULE_CACHE_FILE))).toBe(false);

    // An edited rule file: compiled again (never the stale set), and written for its inputs.
    writeFileSync(join(dir, 'rules.yaml'), rules('600'));
    const edited = await startAndStop();
    expect(edited.rules).toContain('decimal(\\"600\\")');
    expect(edited.rules).not.toContain('decimal(\\"500\\")');
    expect(headerKey()).not.toBe(key);

    // A party changed: compiled again too.
    const editedKey = headerKey();
    writeConfig(`payer: '${ledger.parties.issuer}'`);
    expect((await startAndStop()).rules).toBe(edited.rules);
    expect(headerKey()).not.toBe(editedKey);
  });

  it('a damaged file is ignored with a warning, the rules compiled, and the file written again', async () => {
    writeFileSync(join(dir, 'rules.yaml'), rules());
    writeConfig();
    const first = await startAndStop();
    const good = readFileSync(compiledFile(), 'utf8');
    writeFileSync(compiledFile(), good.replace('"enabled":true', '"enabled":false'));
    const again = await startAndStop();
    expect(again.rules).toBe(first.rules);
    expect(again.warnings).toEqual([
      {
        msg: 'compiled rules ignored; the rules are compiled and the file written again',
        why: 'its contents do not match its hash',
      },
    ]);
    expect(readFileSync(compiledFile(), 'utf8')).toBe(good);
  });

  it('a rule error is reported as without the file, though the file holds the last good rules', async () => {
    writeFileSync(join(dir, 'rules.yaml'), rules());
    writeConfig();
    await startAndStop();
    const cached = readFileSync(compiledFile(), 'utf8');
    // A template only the participant's packages can tell is missing: the error is found by
    // the load that takes compiled rules (the offline check, without packages, passes it).
    writeFileSync(
      join(dir, 'rules.yaml'),
      rules().replace('#invoices:Payment:Payable', '#invoices:Payment:Missing'),
    );
    const failure = async (state: string): Promise<string> => {
      writeConfig(undefined, state);
      const config = await readConfig(join(dir, 'bot.config.yaml'));
      const error = await startBot(config, silentLogger as never).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(UsageError);
      return (error as Error).message;
    };
    const withFile = await failure('state');
    const without = await failure('fresh-state');
    expect(withFile).toMatch(/rules\.yaml:4:\d+/);
    expect(withFile).toBe(without);
    expect(readFileSync(compiledFile(), 'utf8')).toBe(cached);
  });
});
