import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readConfig } from '../../src/cli/compose/read-config.js';
import { rootLogger } from '../../src/cli/compose/root-logger.js';
import { startBot, type RunningBot } from '../../src/cli/compose/start-bot.js';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import { PACKAGE_CACHE_DIR } from '../../src/store/package-archive-cache.js';
import {
  INVOICE,
  invoicePlan,
  issueInvoices,
  startTestLedger,
  type TestLedger,
} from '../integration/harness.js';
import { syntheticDar } from '../support/synthetic-dar.js';
import { TestScope } from '../support/test-scope.js';
import { waitFor } from '../support/wait-for.js';

// `run` against a participant (the sandbox, over HTTP): the rules are checked against the
// packages it lists (downloaded once, then read from state.dir/packages), an interface rule is
// subscribed to with an interface filter and sees the view, and a reload that no longer
// type-checks is rejected.

const PAYABLE = '#invoices:Payment:Payable';

let scope: TestScope;
let dir: string;
let ledger: TestLedger;
beforeEach(async () => {
  scope = new TestScope();
  dir = scope.tempDir();
  ledger = scope.defer(await startTestLedger(15), () => ledger.close());
});
afterEach(() => scope.close());

/** An interface rule: the payer accepts any Payable of more than 500 (read from the view). */
function rule(viewField = 'amount'): string {
  return `version: 1
rules:
  - id: accept-large-payables
    on: { created: '${PAYABLE}', party: payer }
    when: decimal(event.view.${viewField}) > decimal("500")
    then:
      - exercise: { template: '${INVOICE}', contractId: '\${{ event.contractId }}', choice: Accept }
        actAs: [payer]
`;
}

/** The bot `ledgerbot run` starts on a bot.config.yaml whose `ledger` and `parties` are `head`. */
async function startWith(head: readonly string[]): Promise<RunningBot> {
  writeFileSync(
    join(dir, 'bot.config.yaml'),
    [...head, 'rules: rules.yaml', 'state: { dir: state }', ''].join('\n'),
  );
  const config = await readConfig(join(dir, 'bot.config.yaml'));
  const logger = rootLogger({ level: 'silent' }, { out: () => undefined, err: () => undefined });
  const running = await startBot(config, logger);
  return scope.defer(running, () => running.close());
}

/** Against the test's sandbox, over HTTP. */
function start(): Promise<RunningBot> {
  return startWith([
    'ledger:',
    `  url: ${ledger.url}`,
    '  userId: ledgerbot',
    `parties: { issuer: '${ledger.parties.issuer}', payer: '${ledger.parties.payer}' }`,
  ]);
}

describe('run with the participant’s packages', () => {
  it('an interface rule fires on a template implementing it, with event.view filled', async () => {
    writeFileSync(join(dir, 'rules.yaml'), rule());
    const running = await start();
    const { bot } = running;
    // Known as an interface only from the participant's packages: an interface filter.
    expect(bot.rules.rules[0]?.trigger).toMatchObject({ kind: 'created', refKind: 'interface' });
    expect(JSON.stringify(bot.plan.updateFormat)).toContain(
      `"InterfaceFilter":{"value":{"interfaceId":"${PAYABLE}","includeInterfaceView":true`,
    );
    // The participant's packages are cached by id in the state directory.
    const cached = readdirSync(join(dir, 'state', PACKAGE_CACHE_DIR));
    expect(cached.length).toBeGreaterThan(0);
    expect(cached.every((f) => /^[0-9a-f]{64}\.payload$/.test(f))).toBe(true);

    const plan = invoicePlan(2, 1).map((spec, i) => ({
      ...spec,
      currency: 'USD',
      amount: i === 0 ? '900.00' : '100.00',
    }));
    await issueInvoices(ledger, plan);
    const intents = await waitFor(
      () => bot.recentIntents(),
      (list) => list.some((i) => i.state === 'succeeded'),
      20_000,
      'the large invoice accepted through its Payable view',
    );
    // Only the large one: the small one's view says 100.
    expect(intents.filter((i) => i.ruleId === 'accept-large-payables')).toHaveLength(1);
    expect(bot.metrics.snapshot().ruleErrors).toBe(0);
  });

  it('a reload that no longer type-checks against the packages is rejected at file:line:col', async () => {
    writeFileSync(join(dir, 'rules.yaml'), rule());
    const running = await start();
    writeFileSync(join(dir, 'rules.yaml'), rule('amout'));
    const outcome = await running.reload();
    expect(outcome.applied).toBe(false);
    if (outcome.applied) return;
    expect(outcome.errors.join('\n')).toMatch(/rules\.yaml:5:\d+: .*"amout"/);
    expect(outcome.errors.join('\n')).toContain('did you mean "amount"?');
    expect(running.bot.rules.rules[0]?.trigger).toMatchObject({ refKind: 'interface' });
  });

  it('a rule that does not type-check against the participant’s packages stops the start (exit 2)', async () => {
    writeFileSync(join(dir, 'rules.yaml'), rule('amout'));
    await expect(start()).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringMatching(/rules\.yaml:5:\d+: .*"amout"/) as unknown,
    });
  });
});

describe('run with an embedded sandbox and ledger.packages', () => {
  it('the sandbox registers the DAR, and a rule on its template fires', async () => {
    const dar = syntheticDar();
    writeFileSync(join(dir, 'assets.dar'), dar.bytes);
    writeFileSync(
      join(dir, 'rules.yaml'),
      `version: 1
rules:
  - id: note-tokens
    on: { created: '#synthetic-assets:Synthetic.Assets:Token', party: owner }
    when: decimal(event.createArgument.amount) > decimal("10")
    then:
      - create:
          template: '#synthetic-assets:Synthetic.Assets:Note'
          createArguments: { owner: '\${{ parties.owner }}', text: 'big token \${{ event.contractId }}' }
        actAs: [owner]
`,
    );
    const running = await startWith([
      'ledger:',
      '  embedded:',
      `    models: [${join(process.cwd(), 'examples/invoices/model.yaml')}]`,
      '    parties: [owner]',
      '  userId: ledgerbot',
      '  packages: [assets.dar]',
    ]);
    const sandbox = running.sandbox!;
    const client = scope.own(await LedgerClient.create({ url: sandbox.url }));
    // Every package of the DAR is listed and served by the embedded sandbox.
    const listed = await client.listPackages();
    for (const p of dar.packages) expect(listed).toContain(p.packageId);
    const owner = sandbox.parties.owner!;
    await client.submitAndWait({
      commands: [
        {
          CreateCommand: {
            templateId: '#synthetic-assets:Synthetic.Assets:Token',
            createArguments: {
              issuer: owner,
              owner,
              amount: '25.0',
              color: 'Red',
              shape: { tag: 'Square', value: '3' },
              tags: [],
              meta: {},
              note: null,
              pair: { first: '1', second: 'x' },
              expires: null,
              limits: [],
              issued: '2026-01-05',
              flag: true,
            },
          },
        },
      ],
      commandId: 'driver-token-1',
      userId: 'ledgerbot',
      actAs: [owner],
    });
    await waitFor(
      () => running.bot.recentIntents(),
      (list) => list.some((i) => i.ruleId === 'note-tokens' && i.state === 'succeeded'),
      20_000,
      'a Note created for the Token',
    );
  });
});
