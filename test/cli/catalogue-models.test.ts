import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PackageListView } from '../../src/cli/present/package-view.js';
import { startSandbox } from '../../src/sandbox/start-sandbox.js';
import { cli } from '../support/cli-capture.js';
import { syntheticDar } from '../support/synthetic-dar.js';
import { TestScope } from '../support/test-scope.js';

// Models in the CLI's catalogue are loaded as the sandbox loads them (loadModels): after the
// package files, each after the models whose interfaces it implements, and a model with a DAR
// package's name and version describes that package (its types are the DAR's). So `validate`,
// `packages` and `test` check rules against exactly the packages a sandbox serves.

let scope: TestScope;
let dir: string;
beforeEach(() => {
  scope = new TestScope();
  dir = scope.tempDir();
});
afterEach(() => scope.close());

const DAR = syntheticDar();
const fixture = (name: string): string =>
  new URL(`../sandbox/fixtures/${name}`, import.meta.url).pathname;

/** Copies a sandbox fixture model into the test's directory (paths in messages are short). */
function model(name: string): string {
  const path = join(dir, name);
  copyFileSync(fixture(name), path);
  return path;
}

function darFile(): string {
  const path = join(dir, 'assets.dar');
  writeFileSync(path, DAR.bytes);
  return path;
}

function rules(text: string): string {
  const path = join(dir, 'rules.yaml');
  writeFileSync(path, text);
  return path;
}

/** A rule on the vouchers' template and one on the assets' interface, which Voucher implements. */
const voucherRules = (field: string, viewField: string): string => `version: 1
rules:
  - id: big-vouchers
    on: { created: '#vouchers:Vouchers:Voucher', party: owner }
    when: decimal(event.createArgument.${field}) > decimal("100")
    then:
      - exercise:
          interface: '#assets:Asset.Api:Holding'
          contractId: '\${{ event.contractId }}'
          choice: Transfer
          choiceArgument: { newOwner: '\${{ event.createArgument.issuer }}' }
        actAs: [owner]
  - id: holdings
    on: { created: '#assets:Asset.Api:Holding', party: owner }
    when: event.view.${viewField} == "x::1"
    then:
      - exercise:
          template: '#vouchers:Vouchers:Voucher'
          contractId: '\${{ event.contractId }}'
          choice: Archive
        actAs: [owner]
`;

/** A rule on the DAR's Token, which the model synthetic-assets.model.yaml describes. */
const tokenRules = (field: string): string => `version: 1
rules:
  - id: peek
    on: { created: '#synthetic-assets:Synthetic.Assets:Token', party: owner }
    when: decimal(event.createArgument.${field}) > decimal("10")
    then:
      - exercise:
          template: '#synthetic-assets:Synthetic.Assets:Token'
          contractId: '\${{ event.contractId }}'
          choice: Token_Transfer
          choiceArgument: { newOwner: '\${{ event.createArgument.issuer }}' }
        actAs: [owner]
`;

/** A config with a participant that is not read (`--offline`): `packages` reads its flags only. */
function offlineConfig(): string[] {
  const path = join(dir, 'offline.config.yaml');
  writeFileSync(path, 'ledger: { url: "http://127.0.0.1:9", userId: bot }\nrules: rules.yaml\n');
  return ['--config', path, '--offline'];
}

async function listJson(args: string[]): Promise<PackageListView> {
  const r = await cli(['packages', 'list', '--json', ...args]);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as PackageListView;
}

describe('a model implementing another model’s interface', () => {
  it('validate --model loads it after that model, whatever the order given', async () => {
    // vouchers.model.yaml implements #assets:Asset.Api:Holding and comes first.
    const models = ['--model', model('vouchers.model.yaml'), '--model', model('assets.model.yaml')];
    const good = await cli(['validate', ...models, rules(voucherRules('value', 'owner'))]);
    expect(good.out).toBe('1 file(s), 2 rule(s): valid\n');
    expect(good.code).toBe(0);
    expect(good.err).toContain(`1 package from the model ${join(dir, 'vouchers.model.yaml')}`);

    const bad = await cli(['validate', ...models, rules(voucherRules('valu', 'ownr'))]);
    expect(bad.code).toBe(2);
    expect(bad.out).toMatch(/rules\.yaml:5:\d+: template Vouchers:Voucher has no field "valu"/);
    expect(bad.out).toMatch(/rules\.yaml:15:\d+: .*"ownr"/);
  });

  it('packages list --model gives its template the implemented interface, by reference', async () => {
    const view = await listJson([
      ...offlineConfig(),
      '--model',
      model('vouchers.model.yaml'),
      '--model',
      model('assets.model.yaml'),
    ]);
    expect(view.packages.map((p) => [p.name, p.from?.kind])).toEqual([
      ['vouchers', 'model'],
      ['assets', 'model'],
    ]);
    const voucher = view.packages[0]!.templates[0]!;
    expect(voucher.ref).toBe('#vouchers:Vouchers:Voucher');
    expect(voucher.implements).toEqual(['#assets:Asset.Api:Holding']);
  });

  it('a model whose interface package is missing is a located error, exit 2', async () => {
    const r = await cli([
      'validate',
      '--model',
      model('vouchers.model.yaml'),
      rules(voucherRules('value', 'owner')),
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      new RegExp(
        `cannot use model .*vouchers\\.model\\.yaml: .*vouchers\\.model\\.yaml:\\d+:\\d+: `,
      ),
    );
    expect(r.err).toContain('assets');
  });
});

describe('a model describing a DAR’s package', () => {
  it('validate --dar … --model … checks rules against the DAR’s types', async () => {
    const args = ['--dar', darFile(), '--model', model('synthetic-assets.model.yaml')];
    const good = await cli(['validate', ...args, rules(tokenRules('amount'))]);
    expect(good.out).toBe('1 file(s), 1 rule(s): valid\n');
    expect(good.code).toBe(0);
    expect(good.err).toContain(
      `the model ${join(dir, 'synthetic-assets.model.yaml')} describes synthetic-assets 1.0.0 of ${join(dir, 'assets.dar')}`,
    );
    const bad = await cli(['validate', ...args, rules(tokenRules('amout'))]);
    expect(bad.code).toBe(2);
    expect(bad.out).toMatch(/has no field "amout"\n {4}hint: did you mean "amount"\?/);
  });

  it('ledgerbot test --dar … --model … runs rule tests against the DAR’s types', async () => {
    rules(tokenRules('amount'));
    const test = join(dir, 'token.test.yaml');
    writeFileSync(
      test,
      `rules: rules.yaml
parties: { owner: Owner::1220aa }
tests:
  - name: a big token moves to its issuer
    given:
      - created:
          template: '#synthetic-assets:Synthetic.Assets:Token'
          contractId: 00token
          createArgument: { issuer: Issuer::1220bb, owner: Owner::1220aa, amount: '20.0' }
    expect:
      - exercise:
          template: '#synthetic-assets:Synthetic.Assets:Token'
          contractId: 00token
          choice: Token_Transfer
          choiceArgument: { newOwner: Issuer::1220bb }
        actAs: [owner]
`,
    );
    const args = ['test', '--no-color', '--dar', darFile()];
    const r = await cli([...args, '--model', model('synthetic-assets.model.yaml'), test]);
    expect(r.out).toContain('1 passed, 0 failed');
    expect(r.code).toBe(0);
    rules(tokenRules('amout'));
    const bad = await cli([...args, '--model', model('synthetic-assets.model.yaml'), test]);
    expect(bad.out).toMatch(/has no field "amout"/);
    expect(bad.code).toBe(2);
  });

  it('packages list adds no package of its own: the DAR’s signature stays', async () => {
    const withModel = await listJson([
      '--dar',
      darFile(),
      '--model',
      model('synthetic-assets.model.yaml'),
    ]);
    const alone = await listJson(['--dar', darFile()]);
    expect(withModel.packages).toEqual(alone.packages);
    expect(withModel.packages.map((p) => p.packageId)).toEqual([
      DAR.main.packageId,
      DAR.packages[0]!.packageId,
    ]);
  });

  it('without the DAR it is a model of its own, which must declare its fields (exit 2)', async () => {
    const r = await cli([
      'validate',
      '--model',
      model('synthetic-assets.model.yaml'),
      rules(tokenRules('amount')),
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /synthetic-assets\.model\.yaml:\d+:\d+: template Synthetic\.Assets:Token needs "fields"/,
    );
  });
});

describe('an embedded config', () => {
  function embeddedConfig(): string {
    darFile();
    const models = ['vouchers.model.yaml', 'synthetic-assets.model.yaml', 'assets.model.yaml'];
    for (const m of models) model(m);
    rules(voucherRules('value', 'owner'));
    const path = join(dir, 'bot.config.yaml');
    writeFileSync(
      path,
      [
        'ledger:',
        '  embedded:',
        `    models: [${models.join(', ')}]`,
        '  packages: [assets.dar]',
        '  userId: bot',
        'parties: { owner: "Owner::1220aa" }',
        'rules: rules.yaml',
        '',
      ].join('\n'),
    );
    return path;
  }

  it('validate --config loads its models as its sandbox does', async () => {
    const r = await cli(['validate', '--config', embeddedConfig()]);
    expect(r.out).toBe('1 file(s), 2 rule(s): valid\n');
    expect(r.code).toBe(0);
  });

  it('packages list --config lists exactly the packages its sandbox serves', async () => {
    const config = embeddedConfig();
    const view = await listJson(['--config', config]);
    expect(view.complete).toBe(true);
    const sandbox = scope.own(
      await startSandbox({
        dars: [join(dir, 'assets.dar')],
        models: ['vouchers.model.yaml', 'synthetic-assets.model.yaml', 'assets.model.yaml'].map(
          (m) => join(dir, m),
        ),
      }),
    );
    const served = (await (await fetch(`${sandbox.url}/v2/packages`)).json()) as {
      packageIds: string[];
    };
    expect(view.packages.map((p) => p.packageId).sort()).toEqual([...served.packageIds].sort());
    expect(view.packages.map((p) => p.name).sort()).toEqual([
      'assets',
      'synthetic-api',
      'synthetic-assets',
      'vouchers',
    ]);
  });
});

describe('model files named twice', () => {
  it('two models of one package are refused, both named (exit 2), as the sandbox does', async () => {
    const a = model('assets.model.yaml');
    const b = join(dir, 'assets-copy.model.yaml');
    copyFileSync(a, b);
    const r = await cli(['packages', 'list', ...offlineConfig(), '--model', a, '--model', b]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${b} and ${a} both describe package assets 1.0.0`);
    // The same file named twice is one model.
    const once = await listJson([...offlineConfig(), '--model', a, '--model', a]);
    expect(once.packages.map((p) => p.name)).toEqual(['assets']);
  });
});
