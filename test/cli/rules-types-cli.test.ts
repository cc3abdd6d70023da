import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readConfig } from '../../src/cli/compose/read-config.js';
import { rootLogger } from '../../src/cli/compose/root-logger.js';
import { startBot } from '../../src/cli/compose/start-bot.js';
import { eventFormat } from '../../src/ledger/filters.js';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import { TERMINAL_STATES } from '../../src/store/store.js';
import { cli } from '../support/cli-capture.js';
import { freePort } from '../support/free-port.js';
import { syntheticDar } from '../support/synthetic-dar.js';
import { TestScope } from '../support/test-scope.js';
import { waitFor } from '../support/wait-for.js';

// The rule language's types through the CLI: an interface rule validates without packages (a
// warning), `run` refuses a rule mistake before it waits for the participant, and a rule that
// sends today's date, a computed Time, Int and Numeric to a DAR template's fields gets its
// command through the sandbox, which reads values as Canton does (a timestamp is no Date).

let scope: TestScope;
let dir: string;
beforeEach(() => {
  scope = new TestScope();
  dir = scope.tempDir();
});
afterEach(() => scope.close());

const ASSET = '#synthetic-api:Synthetic.Api:Asset';
const TOKEN = '#synthetic-assets:Synthetic.Assets:Token';

/** A rule on the Asset interface that reads its view (`field`). */
function assetRule(field = 'amount'): string {
  return `version: 1
rules:
  - id: big-assets
    on: { created: '${ASSET}', party: owner }
    when: decimal(event.view.${field}) > decimal("10")
    then:
      - exercise: { interface: '${ASSET}', contractId: '\${{ event.contractId }}', choice: Asset_Describe }
        actAs: [owner]
`;
}

describe('validate: an interface rule with and without its packages', () => {
  it('without packages, event.view is a warning and the file is valid (exit 0)', async () => {
    const rules = join(dir, 'rules.yaml');
    writeFileSync(rules, assetRule());
    const r = await cli(['validate', rules]);
    expect(r.out).toContain(
      `${rules}:5:25: warning: event.view is the view of an interface, and no package given says whether "${ASSET}" is one`,
    );
    expect(r.out).toContain('1 file(s), 1 rule(s): valid (1 warning(s))');
    expect(r.code).toBe(0);
  });

  it('with the DAR, the view is checked: a misspelt view field is an error (exit 2)', async () => {
    const dar = join(dir, 'assets.dar');
    writeFileSync(dar, syntheticDar().bytes);
    const rules = join(dir, 'rules.yaml');
    writeFileSync(rules, assetRule());
    const ok = await cli(['validate', '--dar', dar, rules]);
    expect(ok.out).toBe('1 file(s), 1 rule(s): valid\n');
    expect(ok.code).toBe(0);
    writeFileSync(rules, assetRule('amout'));
    const bad = await cli(['validate', '--dar', dar, rules]);
    expect(bad.out).toMatch(/rules\.yaml:5:\d+: .*has no field "amout"/);
    expect(bad.code).toBe(2);
  });
});

describe('run against a participant that does not answer yet', () => {
  async function start(rules: string) {
    writeFileSync(join(dir, 'rules.yaml'), rules);
    writeFileSync(
      join(dir, 'bot.config.yaml'),
      [
        'ledger:',
        `  url: http://127.0.0.1:${await freePort()}`,
        '  userId: ledgerbot',
        '  startTimeout: 0s',
        "parties: { owner: 'Owner::1220aaaa' }",
        'rules: rules.yaml',
        'state: { dir: state }',
        '',
      ].join('\n'),
    );
    const config = await readConfig(join(dir, 'bot.config.yaml'));
    const logger = rootLogger({ level: 'silent' }, { out: () => undefined, err: () => undefined });
    return startBot(config, logger);
  }

  it('a rule mistake exits 2 before the participant is waited for', async () => {
    await expect(start(assetRule().replace('party: owner', 'party: ownr'))).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringMatching(/rules\.yaml:4:\d+: unknown party alias "ownr"/) as unknown,
    });
  });

  it('an interface rule passes the check before the participant’s packages are read', async () => {
    // It gets as far as the participant, which does not answer (startTimeout 0s: exit 1).
    await expect(start(assetRule())).rejects.toMatchObject({
      code: 'PARTICIPANT_UNREACHABLE',
    });
  });
});

describe('run: values sent by the Daml type of their field', () => {
  it('today to a Date, now to an Optional Time, a decimal to an Int and to a Numeric 10: the sandbox takes the command', async () => {
    writeFileSync(join(dir, 'assets.dar'), syntheticDar().bytes);
    writeFileSync(
      join(dir, 'rules.yaml'),
      `version: 1
rules:
  - id: mint
    on: { created: '#synthetic-assets:Synthetic.Assets:Note', party: owner }
    then:
      - create:
          template: '${TOKEN}'
          createArguments:
            issuer: '\${{ parties.owner }}'
            owner: '\${{ parties.owner }}'
            amount: '\${{ decimal("10") / 3 }}'
            color: Red
            shape: { tag: Square, value: '\${{ decimal("4.000") }}' }
            tags: []
            meta: {}
            note: null
            pair: { first: '\${{ 2.0 }}', second: x }
            expires: '\${{ now }}'
            limits: []
            issued: '\${{ today }}'
            flag: true
        actAs: [owner]
`,
    );
    writeFileSync(
      join(dir, 'bot.config.yaml'),
      [
        'ledger:',
        '  embedded:',
        `    models: [${join(process.cwd(), 'examples/invoices/model.yaml')}]`,
        '    parties: [owner]',
        '  userId: ledgerbot',
        '  packages: [assets.dar]',
        'rules: rules.yaml',
        'state: { dir: state }',
        '',
      ].join('\n'),
    );
    const config = await readConfig(join(dir, 'bot.config.yaml'));
    const logger = rootLogger({ level: 'silent' }, { out: () => undefined, err: () => undefined });
    const running = await startBot(config, logger);
    scope.defer(running, () => running.close());
    const sandbox = running.sandbox!;
    const client = scope.own(await LedgerClient.create({ url: sandbox.url }));
    const owner = sandbox.parties.owner!;
    await client.submitAndWait({
      commands: [
        {
          CreateCommand: {
            templateId: '#synthetic-assets:Synthetic.Assets:Note',
            createArguments: { owner, text: 'mint one' },
          },
        },
      ],
      commandId: 'driver-note-1',
      userId: 'ledgerbot',
      actAs: [owner],
    });
    const intents = await waitFor(
      () => running.bot.recentIntents(),
      // Settled, or refused once (a refusal is retried: its error says why).
      (list) =>
        list.some(
          (i) => i.ruleId === 'mint' && (TERMINAL_STATES.has(i.state) || i.error !== undefined),
        ),
      20_000,
      'the mint rule’s command settled',
    );
    expect(intents.find((i) => i.ruleId === 'mint')).toMatchObject({ state: 'succeeded' });
    const end = await client.ledgerEnd();
    const tokens: Record<string, unknown>[] = [];
    for await (const entry of client.activeContracts(
      { activeAtOffset: end, eventFormat: eventFormat({ parties: [owner], templates: [TOKEN] }) },
      { mode: 'list' },
    )) {
      const contract = entry.contractEntry;
      if (contract !== undefined && 'JsActiveContract' in contract) {
        tokens.push(
          contract.JsActiveContract.createdEvent.createArgument as Record<string, unknown>,
        );
      }
    }
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toMatchObject({
      amount: '3.3333333333',
      shape: { tag: 'Square', value: '4' },
      pair: { first: '2', second: 'x' },
      issued: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) as unknown,
      expires: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/) as unknown,
    });
  });
});
