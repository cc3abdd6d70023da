import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readConfig } from '../../src/cli/compose/read-config.js';
import { startBot } from '../../src/cli/compose/start-bot.js';
import { ruleInputsKeyOf, type RuleInputs } from '../../src/cli/compose/rule-inputs-key.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { SQLITE_STORE_FILE } from '../../src/store/open-sqlite-store.js';
import { RuntimeError } from '../../src/runtime/runtime-error.js';
import { freePort, startTestLedger, type TestLedger } from '../integration/harness.js';
import { recordingLogger } from '../runtime/bot-fixture.js';
import { TestScope } from '../support/test-scope.js';

// `run` against a participant checks the rules before it opens its store: against the
// participant's packages when it answers at once (they are compiled once), else against the
// config's packages alone (it does not answer: the start then waits; it refuses the bot), so a
// mistake in them ends the start at once with exit 2 (a UsageError), located, nothing written.

let scope: TestScope;
let dir: string;
beforeEach(() => {
  scope = new TestScope();
  dir = scope.tempDir();
});
afterEach(() => scope.close());

const OFFLINE_CHECK =
  "checking the rules against the config's packages while the participant cannot be asked";

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

function writeConfig(url: string, more: string[] = []): string {
  const file = join(dir, 'bot.config.yaml');
  writeFileSync(
    file,
    [
      'ledger:',
      `  url: ${url}`,
      '  userId: ledgerbot',
      ...more.map((l) => `  ${l}`),
      "parties: { issuer: 'issuer::1220aa', payer: 'payer::1220aa' }",
      'rules: rules.yaml',
      'state: { dir: state }',
      '',
    ].join('\n'),
  );
  return file;
}

async function startWith(configFile: string, ledger?: TestLedger) {
  const logger = recordingLogger();
  const config = await readConfig(configFile);
  const withParties =
    ledger === undefined
      ? config
      : { ...config, parties: { issuer: ledger.parties.issuer, payer: ledger.parties.payer } };
  return { logger, started: startBot(withParties, logger as never) };
}

const offlineChecked = (logger: ReturnType<typeof recordingLogger>): boolean =>
  logger.lines.some((l) => l.msg === OFFLINE_CHECK);

/** Whether the start opened (so created) its SQLite store. */
const storeOpened = (): boolean => existsSync(join(dir, 'state', SQLITE_STORE_FILE));

describe('run: the rule checks against a participant', () => {
  it('compiles the rules once, against the participant, when it answers at once', async () => {
    const ledger = scope.own(await startTestLedger(15));
    writeFileSync(join(dir, 'rules.yaml'), rules());
    const { logger, started } = await startWith(writeConfig(ledger.url), ledger);
    const running = await started;
    try {
      expect(running.bot.rules.rules.map((r) => r.id)).toEqual(['accept-large-payables']);
      expect(offlineChecked(logger)).toBe(false);
    } finally {
      await running.close();
    }
  });

  it('says a rule mistake, located, when the participant answers', async () => {
    const ledger = scope.own(await startTestLedger(15));
    // Only the participant's packages can tell the template is missing.
    writeFileSync(join(dir, 'rules.yaml'), rules('#invoices:Payment:Missing'));
    const { started } = await startWith(writeConfig(ledger.url), ledger);
    await expect(started).rejects.toThrow(UsageError);
    await expect(started).rejects.toThrow(/rules\.yaml:4:\d+/);
    expect(storeOpened()).toBe(false);
  });

  it('ends at once with the rule mistake while the participant does not answer', async () => {
    const port = await freePort(); // nothing listens: the start would wait without end
    writeFileSync(join(dir, 'rules.yaml'), rules().replace('party: payer', 'party: nobody'));
    const { logger, started } = await startWith(writeConfig(`http://127.0.0.1:${port}`));
    await expect(started).rejects.toThrow(UsageError);
    await expect(started).rejects.toThrow(/rules\.yaml:4:\d+.*nobody/s);
    expect(offlineChecked(logger)).toBe(true);
    expect(storeOpened()).toBe(false);
  });

  it('waits for the participant with rules that pass the offline check, and gives up at startTimeout', async () => {
    const port = await freePort();
    writeFileSync(join(dir, 'rules.yaml'), rules());
    const { logger, started } = await startWith(
      writeConfig(`http://127.0.0.1:${port}`, ['startTimeout: 1500ms']),
    );
    await expect(started).rejects.toThrow(RuntimeError);
    await expect(started).rejects.toMatchObject({ code: 'PARTICIPANT_UNREACHABLE' });
    expect(offlineChecked(logger)).toBe(true);
  });

  it('says the rule mistake rather than the refusal when the participant refuses the bot', async () => {
    // Answers every call with a 404 page: not a participant (a wrong ledger.url), final.
    const server = createServer((_, res) => res.writeHead(404).end('<html>not here</html>'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    scope.defer(server, () => new Promise<void>((r) => server.close(() => r())));
    const { port } = server.address() as { port: number };
    const url = `http://127.0.0.1:${port}`;
    writeFileSync(join(dir, 'rules.yaml'), rules().replace('party: payer', 'party: nobody'));
    const wrong = await startWith(writeConfig(url));
    await expect(wrong.started).rejects.toThrow(UsageError);
    await expect(wrong.started).rejects.toThrow(/rules\.yaml:4:\d+/);
    expect(storeOpened()).toBe(false);

    // With the rules right, the refusal is the error.
    writeFileSync(join(dir, 'rules.yaml'), rules());
    const right = await startWith(writeConfig(url));
    await expect(right.started).rejects.toMatchObject({ code: 'PARTICIPANT_REFUSED' });
    expect(offlineChecked(right.logger)).toBe(true);
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
