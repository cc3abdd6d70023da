import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { showType } from '../../../src/daml-lf/daml-type.js';
import { PackageCatalogue } from '../../../src/daml-lf/package-catalogue.js';
import { loadModel } from '../../../src/sandbox/model/load-model.js';
import { loadModels } from '../../../src/sandbox/model/load-models.js';
import type { ModelError } from '../../../src/sandbox/model/model-error.js';
import { modelSignature } from '../../../src/sandbox/model/model-signature.js';
import { modelErrorOf, positionOf as where } from './model-error-of.js';

const fixture = (name: string) => {
  const file = fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
  return { file, text: readFileSync(file, 'utf8') };
};
const ASSETS = fixture('assets.model.yaml');
const VOUCHERS = fixture('vouchers.model.yaml');

const loadError = (text: string, packages?: PackageCatalogue): ModelError =>
  modelErrorOf(text, 'm.yaml', packages === undefined ? {} : { packages });

function expectProblem(
  text: string,
  needle: string,
  problem: RegExp,
  packages?: PackageCatalogue,
): void {
  const e = loadError(text, packages);
  expect(e.problem).toMatch(problem);
  expect([e.line, e.col]).toEqual(where(text, needle));
}

describe('interfaces with choices', () => {
  const assets = loadModel(ASSETS.text, ASSETS.file);
  const holding = assets.interfaces.get('Asset.Api:Holding')!;
  const cash = assets.templates.get('Asset.Cash:Cash')!;

  it('declares each choice’s types on the interface, Archive included', () => {
    expect([...holding.choices.keys()]).toEqual(['Transfer', 'Describe', 'Archive']);
    expect(holding.choices.get('Transfer')).toEqual({
      name: 'Transfer',
      consuming: true,
      argument: [{ name: 'newOwner', type: { kind: 'Party' } }],
      returns: { kind: 'ContractId', template: 'Asset.Api:Holding' },
    });
    expect(holding.choices.get('Describe')).toMatchObject({ consuming: false, argument: [] });
  });

  it('takes each implementation from the template; what it leaves out is not implemented', () => {
    const instance = cash.implements.get(holding.interfaceId)!;
    expect(instance.interface).toBe(holding);
    expect(instance.choices.get('Transfer')).toMatchObject({
      implemented: true,
      consuming: true,
      argument: [{ name: 'newOwner' }],
    });
    expect(instance.choices.get('Describe')).toMatchObject({ implemented: false });
    // An interface's Archive is the template's own.
    expect(instance.choices.get('Archive')).toBe(cash.choices.get('Archive'));
    // The template's own choices do not include the interface's.
    expect([...cash.choices.keys()]).toEqual(['Burn', 'Archive']);
  });

  it('puts interface choices in the signature, with argument records named after them', () => {
    const sig = modelSignature(assets);
    const api = sig.modules.find((m) => m.name === 'Asset.Api')!;
    const iface = api.interfaces.find((i) => i.name === 'Holding')!;
    expect(
      iface.choices.map((c) => [c.name, c.consuming, showType(c.argument, { qualify: true })]),
    ).toEqual([
      ['Transfer', true, 'Asset.Api:Transfer'],
      ['Describe', false, 'Asset.Api:Describe'],
      ['Archive', true, 'Asset.Api:Archive'],
    ]);
    const template = sig.modules.find((m) => m.name === 'Asset.Cash')!.templates[0]!;
    expect(template.implements).toEqual([
      { packageId: assets.packageId, module: 'Asset.Api', name: 'Holding' },
    ]);
    // The archive the sandbox serves says the same.
    const read = assets.archive!.signature.modules.find((m) => m.name === 'Asset.Api')!;
    expect(read.interfaces[0]!.choices.map((c) => c.name)).toEqual([
      'Transfer',
      'Describe',
      'Archive',
    ]);
  });
});

describe('implementing another package’s interface', () => {
  it('loads the models in the order their references need, whatever order they are given', () => {
    const { models, packages } = loadModels([VOUCHERS, ASSETS]);
    expect(models.map((m) => m.name)).toEqual(['assets', 'vouchers']);
    const [assets, vouchers] = models as [(typeof models)[0], (typeof models)[0]];
    const holding = assets.interfaces.get('Asset.Api:Holding')!;
    const voucher = vouchers.templates.get('Vouchers:Voucher')!;
    expect([...voucher.implements.keys()]).toEqual([holding.interfaceId]);
    expect(voucher.implements.get(holding.interfaceId)!.choices.get('Describe')).toMatchObject({
      implemented: true,
      consuming: false,
      returns: { kind: 'Text' },
    });
    const sig = modelSignature(vouchers);
    expect(sig.dependencies).toEqual([assets.packageId]);
    expect(sig.modules[0]!.templates[0]!.implements).toEqual([
      { packageId: assets.packageId, module: 'Asset.Api', name: 'Holding' },
    ]);
    expect(packages.packageNames()).toEqual(['assets', 'vouchers']);
    expect(
      packages
        .implementersOf(
          holding.interfaceId.split(':').length === 3
            ? {
                packageId: assets.packageId,
                module: 'Asset.Api',
                name: 'Holding',
              }
            : { packageId: '', module: '', name: '' },
        )
        .map((e) => e.ref.name),
    ).toEqual(['Cash', 'Voucher']);
  });

  it('refuses an interface of a package that is not loaded, or that it does not have', () => {
    const assets = loadModel(ASSETS.text, ASSETS.file);
    const packages = PackageCatalogue.create([modelSignature(assets)]);
    expectProblem(VOUCHERS.text, "'#assets:Asset.Api:Holding'", /unknown package "assets"/);
    const missing = VOUCHERS.text.replace(
      "'#assets:Asset.Api:Holding'",
      "'#assets:Asset.Api:Nope'",
    );
    expectProblem(
      missing,
      "'#assets:Asset.Api:Nope'",
      /package "assets" has no interface Asset.Api:Nope \(its interfaces: Asset.Api:Holding\)/,
      packages,
    );
    const template = VOUCHERS.text.replace(
      "'#assets:Asset.Api:Holding'",
      "'#assets:Asset.Cash:Cash'",
    );
    expectProblem(
      template,
      "'#assets:Asset.Cash:Cash'",
      /Asset.Cash:Cash of package "assets" is a template, not an interface/,
      packages,
    );
  });

  it('refuses an implementation of a choice the interface does not have, or of Archive', () => {
    const assets = loadModel(ASSETS.text, ASSETS.file);
    const packages = PackageCatalogue.create([modelSignature(assets)]);
    const unknown = VOUCHERS.text.replace('          Describe:', '          Descrbe:');
    expectProblem(
      unknown,
      'Descrbe:',
      /has no choice "Descrbe" \(its choices: Transfer, Describe, Archive\)/,
      packages,
    );
    const archive = VOUCHERS.text.replace('          Describe:', '          Archive:');
    expectProblem(archive, 'Archive:', /the template's own Archive/, packages);
  });

  it('refuses Archive declared on an interface, and an unknown interface of its own package', () => {
    const archive = ASSETS.text.replace('      Describe:', '      Archive:');
    expectProblem(archive, 'Archive:', /an interface cannot declare it/);
    const unknown = ASSETS.text.replace(
      '      Asset.Api:Holding:\n        view: { owner',
      '      Asset.Api:Holdng:\n        view: { owner',
    );
    expectProblem(
      unknown,
      'Asset.Api:Holdng:',
      /unknown interface "Asset.Api:Holdng".*this package's: Asset.Api:Holding/,
    );
  });
});
