import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PackageListView } from '../../src/cli/present/package-view.js';
import { cli } from '../support/cli-capture.js';
import { FakePackageServer } from '../support/fake-package-server.js';
import { SHARED_DIR, skipWithoutShared } from '../support/shared-files.js';
import { syntheticDar } from '../support/synthetic-dar.js';
import { TestScope } from '../support/test-scope.js';

// `ledgerbot packages list|show`: from DAR files, from a config (its package files, models and
// participant), text and JSON. Synthetic DARs (our encoder) run in a lone clone; the real DARs
// of ../shared check the same against what Daml itself built.

let scope: TestScope;
let dir: string;
beforeEach(() => {
  scope = new TestScope();
  dir = scope.tempDir();
});
afterEach(() => scope.close());

const DAR = syntheticDar();

function writeDarFile(name = 'assets.dar', bytes: Uint8Array = DAR.bytes): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

async function listJson(args: string[]): Promise<PackageListView> {
  const r = await cli(['packages', 'list', '--json', ...args]);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as PackageListView;
}

describe('packages list --dar (synthetic)', () => {
  it('prints every package with its templates, interfaces, keys and choices', async () => {
    const file = writeDarFile();
    const r = await cli(['packages', 'list', '--dar', file]);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    const [api, assets] = DAR.packages;
    expect(lines).toContain(`synthetic-assets 1.0.0  ${assets!.packageId}  (${file})`);
    expect(lines).toContain(`synthetic-api 1.0.0  ${api!.packageId}  (${file})`);
    expect(r.out).toContain(
      '  template Synthetic.Assets:Token (issuer : Party, owner : Party, amount : Numeric 10, color : Synthetic.Assets:Color',
    );
    expect(lines).toContain('    key Synthetic.Assets:Pair Party Party');
    expect(lines).toContain('    implements #synthetic-api:Synthetic.Api:Asset');
    expect(lines).toContain(
      '    choice Token_Transfer (newOwner : Party) : ContractId Synthetic.Assets:Token',
    );
    expect(lines).toContain('    nonconsuming choice Token_Peek () : Numeric 10');
    expect(lines).toContain('  interface Synthetic.Api:Asset');
    expect(lines).toContain(
      '    view Synthetic.Api:AssetView (owner : Party, amount : Numeric 10, label : Optional Text)',
    );
    expect(lines).toContain('    nonconsuming choice Asset_Describe () : Text');
    expect(lines).toContain('2 package(s), 3 template(s) and interface(s)');
  });

  it('--json gives the same as JSON, in a stable shape', async () => {
    const view = await listJson(['--dar', writeDarFile()]);
    expect(view.complete).toBe(false);
    expect(view.packages.map((p) => [p.name, p.version, p.packageId])).toEqual([
      ['synthetic-assets', '1.0.0', DAR.main.packageId],
      ['synthetic-api', '1.0.0', DAR.packages[0]!.packageId],
    ]);
    const assets = view.packages[0]!;
    expect(Object.keys(assets)).toEqual([
      'packageId',
      'name',
      'version',
      'lfVersion',
      'from',
      'templates',
      'interfaces',
    ]);
    expect(assets.from).toEqual({ kind: 'file', file: join(dir, 'assets.dar') });
    const token = assets.templates.find((t) => t.name === 'Token')!;
    expect(token).toMatchObject({
      ref: '#synthetic-assets:Synthetic.Assets:Token',
      id: `${DAR.main.packageId}:Synthetic.Assets:Token`,
      module: 'Synthetic.Assets',
      key: 'Synthetic.Assets:Pair Party Party',
      implements: ['#synthetic-api:Synthetic.Api:Asset'],
    });
    expect(token.fields[0]).toEqual({ name: 'issuer', type: 'Party' });
    expect(token.choices.find((c) => c.name === 'Token_Split')).toEqual({
      name: 'Token_Split',
      consuming: true,
      argument: 'Synthetic.Assets:Token_Split',
      argumentFields: [{ name: 'splitAmount', type: 'Numeric 10' }],
      result:
        'Synthetic.Assets:Pair (ContractId Synthetic.Assets:Token) (ContractId Synthetic.Assets:Token)',
    });
    expect(assets.templates.find((t) => t.name === 'Note')).toMatchObject({
      key: null,
      implements: [],
    });
    const asset = view.packages[1]!.interfaces[0]!;
    expect(asset).toMatchObject({
      ref: '#synthetic-api:Synthetic.Api:Asset',
      view: 'Synthetic.Api:AssetView',
      viewFields: [
        { name: 'owner', type: 'Party' },
        { name: 'amount', type: 'Numeric 10' },
        { name: 'label', type: 'Optional Text' },
      ],
    });
    expect(asset.choices.map((c) => [c.name, c.consuming])).toEqual([
      ['Asset_Transfer', true],
      ['Asset_Describe', false],
      ['Archive', true],
    ]);
  });

  it('reads a directory of DARs and DALFs; a package in two files is listed once', async () => {
    mkdirSync(join(dir, 'dars'));
    writeDarFile('dars/a.dar');
    writeDarFile('dars/b.dar');
    const api = DAR.packages[0]!;
    writeFileSync(join(dir, 'dars', `synthetic-api-1.0.0-${api.packageId}.dalf`), api.bytes);
    writeFileSync(join(dir, 'dars', 'notes.txt'), 'not a package');
    const view = await listJson(['--dar', join(dir, 'dars')]);
    expect(view.packages.map((p) => p.name)).toEqual(['synthetic-assets', 'synthetic-api']);
    expect(view.sources).toEqual([
      `2 package(s) from ${join(dir, 'dars', 'a.dar')} (synthetic-assets 1.0.0)`,
      `2 package(s) from ${join(dir, 'dars', 'b.dar')} (synthetic-assets 1.0.0)`,
      `1 package(s) from ${join(dir, 'dars', `synthetic-api-1.0.0-${api.packageId}.dalf`)} (synthetic-api 1.0.0)`,
    ]);
  });
});

describe('packages show', () => {
  it('prints a template as Daml declares it, with the data types it uses', async () => {
    const file = writeDarFile();
    const r = await cli([
      'packages',
      'show',
      '#synthetic-assets:Synthetic.Assets:Token',
      '--dar',
      file,
    ]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      [
        'template Token',
        '  with',
        '    issuer : Party',
        '    owner : Party',
        '    amount : Numeric 10',
        '    color : Synthetic.Assets:Color',
      ].join('\n'),
    );
    expect(r.out).toContain(
      [
        '    choice Token_Transfer : ContractId Synthetic.Assets:Token',
        '      with',
        '        newOwner : Party',
      ].join('\n'),
    );
    expect(r.out).toContain('    key : Synthetic.Assets:Pair Party Party');
    expect(r.out).toContain('    implements #synthetic-api:Synthetic.Api:Asset');
    expect(r.out).toContain('data Synthetic.Assets:Color\n  = Red\n  | Green\n  | Blue');
    expect(r.out).toContain(
      'data Synthetic.Assets:Shape\n  = Circle (Numeric 10)\n  | Square Int\n  | NoShape',
    );
    expect(r.out).toContain('data Synthetic.Assets:Pair a b = Pair\n  with\n    first : a');
    // A choice's argument record is written in the choice, not again as a data type.
    expect(r.out).not.toContain('data Synthetic.Assets:Token_Transfer');
  });

  it('prints an interface with its view; finds it by id or by Module:Entity too', async () => {
    const file = writeDarFile();
    const api = DAR.packages[0]!.packageId;
    for (const ref of [
      '#synthetic-api:Synthetic.Api:Asset',
      `${api}:Synthetic.Api:Asset`,
      'Synthetic.Api:Asset',
    ]) {
      const r = await cli(['packages', 'show', ref, '--dar', file]);
      expect(r.code).toBe(0);
      expect(r.out).toContain('interface Asset where\n  viewtype Synthetic.Api:AssetView');
      expect(r.out).toContain('  nonconsuming choice Asset_Describe : Text');
      expect(r.out).toContain('data Synthetic.Api:AssetView = AssetView');
    }
  });

  it('--json has the entry, its package and the data types it uses', async () => {
    const r = await cli([
      'packages',
      'show',
      '#synthetic-assets:Synthetic.Assets:Token',
      '--json',
      '--dar',
      writeDarFile(),
    ]);
    expect(r.code).toBe(0);
    const view = JSON.parse(r.out) as {
      entry: { kind: string; ref: string };
      package: { name: string };
      dataTypes: { ref: string; shape: { kind: string } }[];
    };
    expect(view.entry).toMatchObject({
      kind: 'template',
      ref: '#synthetic-assets:Synthetic.Assets:Token',
    });
    expect(view.package.name).toBe('synthetic-assets');
    expect(view.dataTypes.map((d) => [d.ref, d.shape.kind])).toContainEqual([
      '#synthetic-assets:Synthetic.Assets:Color',
      'enum',
    ]);
  });

  it('an unknown reference exits 1 with the closest one', async () => {
    const file = writeDarFile();
    const r = await cli([
      'packages',
      'show',
      '#synthetic-assets:Synthetic.Assets:Tokn',
      '--dar',
      file,
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('no template or interface #synthetic-assets:Synthetic.Assets:Tokn');
    expect(r.err).toContain('did you mean #synthetic-assets:Synthetic.Assets:Token?');
    const short = await cli(['packages', 'show', 'Synthetic.Api:Aset', '--dar', file]);
    expect(short.err).toContain('did you mean #synthetic-api:Synthetic.Api:Asset?');
  });
});

describe('packages --config', () => {
  it('reads ledger.packages and embedded models, without a participant', async () => {
    writeDarFile();
    const model = join(process.cwd(), 'examples/invoices/model.yaml');
    const config = join(dir, 'bot.config.yaml');
    writeFileSync(
      config,
      `ledger:\n  embedded:\n    models: [${model}]\n  packages: [assets.dar]\n  userId: bot\nrules: rules/\n`,
    );
    const view = await listJson(['--config', config]);
    expect(view.complete).toBe(true);
    expect(view.packages.map((p) => [p.name, p.from?.kind])).toEqual([
      ['synthetic-assets', 'file'],
      ['synthetic-api', 'file'],
      ['invoices', 'model'],
    ]);
  });

  it('reads the participant’s packages once, then from the cache in state.dir/packages', async () => {
    const server = scope.own(await FakePackageServer.start(DAR.packages.map((p) => p.payload)));
    const config = join(dir, 'bot.config.yaml');
    writeFileSync(
      config,
      `ledger:\n  url: ${server.url}\n  userId: bot\nrules: rules/\nstate: {dir: state}\n`,
    );
    const first = await listJson(['--config', config]);
    expect(first.complete).toBe(true);
    expect(first.packages.map((p) => [p.name, p.from])).toEqual([
      ['synthetic-api', { kind: 'participant', url: server.url }],
      ['synthetic-assets', { kind: 'participant', url: server.url }],
    ]);
    expect(first.sources).toEqual([
      `2 package(s) from the participant at ${server.url} (2 downloaded, 0 from the cache)`,
    ]);
    expect(server.downloads).toHaveLength(2);
    const again = await listJson(['--config', config]);
    expect(again.sources).toEqual([
      `2 package(s) from the participant at ${server.url} (0 downloaded, 2 from the cache)`,
    ]);
    expect(server.downloads).toHaveLength(2);
    expect(again.packages).toEqual(first.packages);
    // --offline: the participant is not asked.
    const lists = server.lists;
    const r = await cli(['packages', 'list', '--config', config, '--offline']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('no packages to read');
    expect(server.lists).toBe(lists);
  });

  it('a participant that cannot be read exits 1 with the reason', async () => {
    const server = scope.own(await FakePackageServer.start(DAR.packages.map((p) => p.payload)));
    server.failWith = 503;
    const config = join(dir, 'bot.config.yaml');
    writeFileSync(
      config,
      `ledger:\n  url: ${server.url}\n  userId: bot\nrules: rules/\nstate: {dir: state}\n`,
    );
    const r = await cli(['packages', 'list', '--config', config]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('SERVICE_NOT_RUNNING');
  });
});

describe('packages: usage mistakes exit 2', () => {
  it.each([
    [['packages'], 'packages needs list or show'],
    [['packages', 'lst'], 'packages needs list or show, not "lst"'],
    [['packages', 'show'], 'packages show needs a template or interface'],
    [['packages', 'list', 'extra'], 'packages list takes no argument'],
    [
      ['packages', 'list', '--dar', 'a.dar', '--config', 'b.yaml'],
      'pass --dar FILE or --config FILE, not both',
    ],
  ])('%j', async (args, message) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
  });
});

describe.skipIf(skipWithoutShared('daml-lf/dars/DamlDefinitionsServiceMain.dar'))(
  'packages list --dar DamlDefinitionsServiceMain.dar (built by Daml)',
  () => {
    const dar = `${SHARED_DIR}daml-lf/dars/DamlDefinitionsServiceMain.dar`;

    it('prints its templates with their choices and the interface with its view and choices', async () => {
      const r = await cli(['packages', 'list', '--dar', dar]);
      expect(r.code).toBe(0);
      const lines = r.out.split('\n');
      for (const template of [
        'MainApp:MainTemplate',
        'MainApp:AllBuiltinTypesTemplate',
        'ExternalDep:TemplateFoo',
      ]) {
        expect(lines.some((l) => l.startsWith(`  template ${template} (`))).toBe(true);
      }
      expect(lines).toContain('    choice MainTemplate_Choice () : MainApp:RecordInMain');
      expect(lines).toContain(
        '    choice SourceTemplate_Args_RetRecord (choiceArg : ExternalDep:SomeParamRecord Time) : ExternalDep:AnotherRecord',
      );
      expect(lines).toContain('    nonconsuming choice TemplateFoo_NoArgs_RetUnit () : ()');
      expect(lines).toContain('  interface ExternalDep:MyInterface');
      expect(lines).toContain(
        '    view ExternalDep:MyInterfaceViewType (name : Text, value : Int)',
      );
      expect(lines).toContain('    nonconsuming choice MyNonConsumingChoice () : Int');
      expect(lines).toContain(
        '    choice MyChoice (argument1 : Bool, argument2 : Int) : DA.Types:Tuple2 (ContractId ExternalDep:MyInterface) Int',
      );
    });

    it('--json says the same', async () => {
      const view = await listJson(['--dar', dar]);
      const all = view.packages.flatMap((p) =>
        p.templates.map((t) => `${p.name}:${t.module}:${t.name}`),
      );
      expect(all).toEqual(
        expect.arrayContaining([
          'DamlDefinitionsServiceMain:MainApp:MainTemplate',
          'DamlDefinitionsServiceMain:MainApp:AllBuiltinTypesTemplate',
          'DamlDefinitionsServiceDep:ExternalDep:TemplateFoo',
        ]),
      );
      const dep = view.packages.find((p) => p.name === 'DamlDefinitionsServiceDep')!;
      expect(dep.templates.find((t) => t.name === 'TemplateFoo')).toMatchObject({ key: 'Party' });
      const iface = dep.interfaces.find((i) => i.name === 'MyInterface')!;
      expect(iface.viewFields).toEqual([
        { name: 'name', type: 'Text' },
        { name: 'value', type: 'Int' },
      ]);
      expect(iface.choices.map((c) => c.name).sort()).toEqual(
        ['Archive', 'MyChoice', 'MyNonConsumingChoice'].sort(),
      );
      // Every package has its id, name and version, the standard library's too.
      expect(view.packages.length).toBeGreaterThan(20);
      for (const p of view.packages) {
        expect(p.packageId).toMatch(/^[0-9a-f]{64}$/);
        expect(p.name).not.toBe('');
        expect(p.version).not.toBe('');
      }
    });
  },
);

describe.skipIf(skipWithoutShared('daml-lf/dars/splice-amulet-0.1.14.dar'))(
  'packages show on the Canton Network token (built by Daml)',
  () => {
    it('shows Amulet implementing the token standard’s Holding, and Holding’s view', async () => {
      const dar = `${SHARED_DIR}daml-lf/dars/splice-amulet-0.1.14.dar`;
      const amulet = await cli([
        'packages',
        'show',
        '#splice-amulet:Splice.Amulet:Amulet',
        '--dar',
        dar,
      ]);
      expect(amulet.code).toBe(0);
      expect(amulet.out).toContain('template Amulet');
      expect(amulet.out).toContain(
        '    implements #splice-api-token-holding-v1:Splice.Api.Token.HoldingV1:Holding',
      );
      const holding = await cli([
        'packages',
        'show',
        '#splice-api-token-holding-v1:Splice.Api.Token.HoldingV1:Holding',
        '--dar',
        dar,
      ]);
      expect(holding.code).toBe(0);
      expect(holding.out).toContain('viewtype Splice.Api.Token.HoldingV1:HoldingView');
      expect(holding.out).toMatch(
        /data Splice\.Api\.Token\.HoldingV1:HoldingView = HoldingView\n {2}with\n {4}owner : Party/,
      );
      expect(holding.out).toContain('    lock : Optional Splice.Api.Token.HoldingV1:Lock');
    });
  },
);

describe('packages --model (no --config)', () => {
  it('reads the files named, not ./bot.config.yaml and its participant', async () => {
    // The working directory is the repository's, whose bot.config.yaml names a participant at
    // 127.0.0.1:7575 that no test starts: reading it would fail the command.
    const model = join(process.cwd(), 'examples/invoices/model.yaml');
    const view = await listJson(['--model', model]);
    expect(view.complete).toBe(false);
    expect(view.packages.map((p) => [p.name, p.from?.kind])).toEqual([['invoices', 'model']]);
  });
});
