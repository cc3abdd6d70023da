import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/start-sandbox.js';
import { cli, type CliResult } from '../support/cli-capture.js';
import { SHARED_DIR, skipWithoutShared } from '../support/shared-files.js';
import { syntheticDar } from '../support/synthetic-dar.js';
import { TestScope } from '../support/test-scope.js';

// The "Done when": a rule file against a DAR with a misspelt field, a misspelt choice,
// a wrong argument shape and a wrong literal gives four located errors and exit 2, and a correct
// one validates, both with `validate --config` where `ledger.packages` names the DAR and against
// a sandbox started with the DAR (its packages read over GET /v2/packages/{id}).

let scope: TestScope;
let dir: string;
beforeEach(() => {
  scope = new TestScope();
  dir = scope.tempDir();
});
afterEach(() => scope.close());

type Case = {
  /** The DAR file (written or shared). */
  readonly dar: () => string;
  /** A rule file with the four mistakes, and where each is reported. */
  readonly bad: string;
  readonly errors: readonly RegExp[];
  /** The same rule without them. */
  readonly good: string;
};

const TOKEN_RULE = {
  template: '#synthetic-assets:Synthetic.Assets:Token',
  condition: (f: string) => `decimal(event.createArgument.${f}) > decimal("10")`,
  firstArgument: "{ newOwner: '${{ event.createArgument.owner }}' }",
  split: 'Token_Split',
};
const synthetic: Case = {
  dar: () => {
    const path = join(dir, 'assets.dar');
    writeFileSync(path, syntheticDar().bytes);
    return path;
  },
  bad: rulesOf({
    ...TOKEN_RULE,
    field: 'amout',
    choice: 'Token_Transfr',
    shape: '{ splitAmount: [1, 2] }',
    literal: "{ splitAmount: '1.23456789012' }",
  }),
  errors: [
    /rules\.yaml:5:\d+: template Synthetic\.Assets:Token has no field "amout"\n {4}hint: did you mean "amount"\?/,
    /rules\.yaml:10:\d+: template Synthetic\.Assets:Token has no choice "Token_Transfr"\n {4}hint: did you mean "Token_Transfer"\?/,
    /rules\.yaml:17:\d+: expected a Numeric 10 .*got a list/,
    /rules\.yaml:23:\d+: "1\.23456789012" has 11 digits after the point; a Numeric 10 has at most 10/,
  ],
  good: rulesOf({
    ...TOKEN_RULE,
    field: 'amount',
    choice: 'Token_Transfer',
    shape: "{ splitAmount: '1.5' }",
    literal: "{ splitAmount: '1.2345678901' }",
  }),
};

/**
 * A rule on `template`'s creation: its condition reads `field`, its first action exercises
 * `choice` with `firstArgument`, the other two `split` with the arguments `shape` and `literal`.
 */
function rulesOf(r: {
  readonly template: string;
  readonly field: string;
  readonly condition: (field: string) => string;
  readonly choice: string;
  readonly firstArgument: string;
  readonly split: string;
  readonly shape: string;
  readonly literal: string;
}): string {
  const exercise = (choice: string, argument: string): string => `      - exercise:
          template: '${r.template}'
          contractId: '\${{ event.contractId }}'
          choice: ${choice}
          choiceArgument: ${argument}
        actAs: [owner]
`;
  return `version: 1
rules:
  - id: move-tokens
    on: { created: '${r.template}', party: owner }
    when: ${r.condition(r.field)}
    then:
${exercise(r.choice, r.firstArgument)}${exercise(r.split, r.shape)}${exercise(r.split, r.literal)}`;
}

function config(ledger: string[], rules: string): string {
  writeFileSync(join(dir, 'rules.yaml'), rules);
  const path = join(dir, 'bot.config.yaml');
  writeFileSync(
    path,
    [
      'ledger:',
      ...ledger,
      '  userId: bot',
      'parties: { owner: "Owner::1220aa" }',
      'rules: rules.yaml',
      `state: { dir: ${join(dir, 'state')} }`,
      '',
    ].join('\n'),
  );
  return path;
}

function expectFourErrors(r: CliResult, c: Case): void {
  expect(r.code).toBe(2);
  expect(r.out).toMatch(/1 file\(s\): 4 error\(s\), \d+ warning\(s\)\n$/);
  for (const e of c.errors) expect(r.out).toMatch(e);
  expect(r.out.match(/^\S+rules\.yaml:\d+:\d+: /gm)?.length ?? 0).toBeGreaterThanOrEqual(4);
}

async function validateBoth(c: Case): Promise<void> {
  const dar = c.dar();
  // 1. ledger.packages names the DAR (no participant).
  const packagesConfig = (rules: string) =>
    config(['  url: http://127.0.0.1:9', `  packages: [${dar}]`], rules);
  const offline = await cli(['validate', '--config', packagesConfig(c.bad), '--offline']);
  expectFourErrors(offline, c);
  const fine = await cli(['validate', '--config', packagesConfig(c.good), '--offline']);
  expect(fine.out).toMatch(/1 file\(s\), 1 rule\(s\): valid/);
  expect(fine.code).toBe(0);

  // 2. A sandbox started with the DAR: the packages come from GET /v2/packages/{id}.
  const sandbox = scope.own(await startSandbox({ dars: [dar] }));
  const participantConfig = (rules: string) => config([`  url: ${sandbox.url}`], rules);
  const online = await cli(['validate', '--config', participantConfig(c.bad)]);
  expectFourErrors(online, c);
  expect(online.err).toMatch(
    new RegExp(
      `note: types from \\d+ package\\(s\\) from the participant at ${sandbox.url} \\(\\d+ downloaded, 0 from the cache\\)`,
    ),
  );
  const good = await cli(['validate', '--config', participantConfig(c.good)]);
  expect(good.out).toMatch(/1 file\(s\), 1 rule\(s\): valid/);
  expect(good.code).toBe(0);
  // The second run read them from the cache in state.dir/packages.
  expect(good.err).toMatch(/\(0 downloaded, \d+ from the cache\)/);
}

describe('validate: four located errors against a DAR, and a correct rule validates', () => {
  it('a synthetic DAR (our encoder), by ledger.packages and from a sandbox started with it', async () => {
    await validateBoth(synthetic);
  });

  it.skipIf(skipWithoutShared('daml-lf/dars/DamlDefinitionsServiceMain.dar'))(
    'DamlDefinitionsServiceMain.dar (built by Daml), by ledger.packages and from a sandbox started with it',
    async () => {
      const FOO_RULE = {
        template: '#DamlDefinitionsServiceDep:ExternalDep:TemplateFoo',
        condition: (f: string) => `event.createArgument.${f} == parties.owner`,
        firstArgument: "{ choiceArg: { foo: '2026-01-05T09:00:00Z' } }",
        split: 'SourceTemplate_Args_RetRecord',
      };
      const real: Case = {
        dar: () => `${SHARED_DIR}daml-lf/dars/DamlDefinitionsServiceMain.dar`,
        bad: rulesOf({
          ...FOO_RULE,
          field: 'somePartyy',
          choice: 'SourceTemplate_Args_RetRecrd',
          shape: '{ choiceArg: [1] }',
          literal: "{ choiceArg: { foo: 'not a time' } }",
        }),
        errors: [
          /rules\.yaml:5:\d+: template ExternalDep:TemplateFoo has no field "somePartyy"\n {4}hint: did you mean "someParty"\?/,
          /rules\.yaml:10:\d+: template ExternalDep:TemplateFoo has no choice "SourceTemplate_Args_RetRecrd"/,
          /rules\.yaml:17:\d+: .*list/,
          /rules\.yaml:23:\d+: .*not a time/,
        ],
        good: rulesOf({
          ...FOO_RULE,
          field: 'someParty',
          choice: 'SourceTemplate_Args_RetRecord',
          shape: "{ choiceArg: { foo: '2026-01-05T09:00:00Z' } }",
          literal: "{ choiceArg: { foo: '2026-01-05T09:00:00.5Z' } }",
        }),
      };
      await validateBoth(real);
    },
  );
});

describe('ledgerbot test checks rules against the packages it is given', () => {
  it("--dar, and the config's ledger.packages: a rule that does not type-check is an error (exit 2)", async () => {
    const dar = join(dir, 'assets.dar');
    writeFileSync(dar, syntheticDar().bytes);
    const rules = (field: string) =>
      rulesOf({
        ...TOKEN_RULE,
        field,
        choice: 'Token_Transfer',
        shape: "{ splitAmount: '1.5' }",
        literal: "{ splitAmount: '2.5' }",
      });
    writeFileSync(
      join(dir, 'tokens.test.yaml'),
      `rules: rules.yaml
parties: { owner: Owner::1220aa }
now: 2026-01-05T09:00:00Z
tests:
  - name: a small token is left alone
    given:
      - created:
          template: '${TOKEN_RULE.template}'
          createArgument: { owner: Owner::1220aa, amount: '5.0' }
    expect: []
`,
    );
    writeFileSync(join(dir, 'rules.yaml'), rules('amout'));
    // Without packages the misspelt field is found only when the rule runs: a rule error.
    const untyped = await cli(['test', join(dir, 'tokens.test.yaml')]);
    expect(untyped.code).toBe(1);
    expect(untyped.out).toContain('unexpected rule error');
    const withDar = await cli(['test', '--dar', dar, join(dir, 'tokens.test.yaml')]);
    expect(withDar.code).toBe(2);
    expect(withDar.out + withDar.err).toMatch(/rules\.yaml:5:\d+: .*no field "amout"/);
    const cfg = config(['  url: http://127.0.0.1:9', `  packages: [${dar}]`], rules('amout'));
    const withConfig = await cli(['test', '--config', cfg, join(dir, 'tokens.test.yaml')]);
    expect(withConfig.code).toBe(2);
    expect(withConfig.out + withConfig.err).toMatch(/no field "amout"/);
    writeFileSync(join(dir, 'rules.yaml'), rules('amount'));
    const fixed = await cli(['test', '--dar', dar, join(dir, 'tokens.test.yaml')]);
    expect(fixed.out).toContain('1 passed, 0 failed');
    expect(fixed.code).toBe(0);
  });
});
