import { describe, expect, it } from 'vitest';
import { showType } from '../../../src/daml-lf/daml-type.js';
import { PackageCatalogue } from '../../../src/daml-lf/package-catalogue.js';
import { loadModel } from '../../../src/sandbox/model/load-model.js';
import { modelSignature } from '../../../src/sandbox/model/model-signature.js';

const MODEL = `package: { name: shop, version: 1.2.0 }
interfaces:
  Shop.Api:Priced:
    view: { price: Numeric 2, tier: { enum: [Low, High] } }
templates:
  Shop.Orders:Order:
    fields:
      buyer: Party
      item: { sku: Text, inner: { qty: Int64 } }
      lines: List { memo: Text }
      colour: { enum: [Red, Green] }
      basket: Optional (ContractId Shop.Orders:Basket)
      any: ContractId
    signatories: [buyer]
    key: { type: { buyer: Party, ref: Text }, value: { buyer: this.buyer, ref: this.item.sku }, maintainers: [buyer] }
    implements:
      Shop.Api:Priced: { view: { price: '"1.00"', tier: '"Low"' } }
    choices:
      Accept: { controllers: [buyer], argument: { note: Optional Text } }
      Split: { controllers: [buyer], argument: { parts: { n: Int64 } }, result: '1', returns: Int64 }
      Peek: { controllers: [buyer], consuming: false, result: this.buyer }
  Shop.Orders:Basket:
    fields: { owner: Party }
    signatories: [owner]
    choices:
      Accept: { controllers: [owner] }
`.replace('lines: List { memo: Text }\n      ', '');

describe('modelSignature: a sandbox model as a package signature', () => {
  const model = loadModel(MODEL, 'shop.yaml');
  const sig = modelSignature(model);
  const catalogue = PackageCatalogue.create([sig]);
  const module = (name: string) => sig.modules.find((m) => m.name === name)!;

  it('keeps the package id, name and version, and marks it as a model', () => {
    expect(sig).toMatchObject({
      packageId: model.packageId,
      name: 'shop',
      version: '1.2.0',
      lfVersion: 'model',
      dependencies: [],
    });
    expect(sig.modules.map((m) => m.name).sort()).toEqual(['Shop.Api', 'Shop.Orders']);
  });

  it('names a template record after the template, inline records and enums after their place', () => {
    const order = module('Shop.Orders').templates.find((t) => t.name === 'Order')!;
    expect(
      Object.fromEntries(order.fields.map((f) => [f.name, showType(f.type, { qualify: true })])),
    ).toEqual({
      buyer: 'Party',
      item: 'Shop.Orders:Order.item',
      colour: 'Shop.Orders:Order.colour',
      basket: 'Optional (ContractId Shop.Orders:Basket)',
      any: 'ContractId (any template)',
    });
    const item = catalogue.resolve(order.fields.find((f) => f.name === 'item')!.type);
    expect(item).toMatchObject({ kind: 'Record', fields: [{ name: 'sku' }, { name: 'inner' }] });
    if (item.kind !== 'Record') throw new Error('not a record');
    const inner = item.fields[1]!.type;
    expect(showType(inner, { qualify: true })).toBe('Shop.Orders:Order.item.inner');
    expect(catalogue.resolve(order.fields.find((f) => f.name === 'colour')!.type)).toMatchObject({
      kind: 'Enum',
      constructors: ['Red', 'Green'],
    });
    expect(showType(order.key!, { qualify: true })).toBe('Shop.Orders:Order.Key');
    expect(order.implements).toEqual([
      { packageId: model.packageId, module: 'Shop.Api', name: 'Priced' },
    ]);
  });

  it('names choice arguments after the choice, or Template.Choice when two templates share it', () => {
    const order = module('Shop.Orders').templates.find((t) => t.name === 'Order')!;
    const byName = Object.fromEntries(order.choices.map((c) => [c.name, c]));
    expect(showType(byName.Accept!.argument, { qualify: true })).toBe('Shop.Orders:Order.Accept');
    expect(showType(byName.Split!.argument, { qualify: true })).toBe('Shop.Orders:Split');
    expect(showType(byName.Archive!.argument, { qualify: true })).toBe('Shop.Orders:Archive');
    expect(byName.Split).toMatchObject({ consuming: true, result: { kind: 'Int64' } });
    expect(byName.Peek).toMatchObject({ consuming: false, result: { kind: 'Unsupported' } });
    expect(byName.Archive!.result).toEqual({ kind: 'Unit' });
    expect(catalogue.resolve(byName.Split!.argument)).toMatchObject({
      kind: 'Record',
      fields: [{ name: 'parts', type: { kind: 'Con', ref: { name: 'Split.parts' } } }],
    });
    const basket = module('Shop.Orders').templates.find((t) => t.name === 'Basket')!;
    expect(showType(basket.choices[0]!.argument)).toBe('Basket.Accept');
    // Every Archive of the module shares one empty record.
    expect(module('Shop.Orders').dataTypes.filter((d) => d.name === 'Archive')).toHaveLength(1);
  });

  it('gives an interface its data type and a View record', () => {
    const priced = module('Shop.Api').interfaces[0]!;
    expect(priced.name).toBe('Priced');
    expect(showType(priced.view, { qualify: true })).toBe('Shop.Api:Priced.View');
    expect(catalogue.resolve(priced.view)).toMatchObject({
      kind: 'Record',
      fields: [{ name: 'price', type: { kind: 'Numeric', scale: 2 } }, { name: 'tier' }],
    });
    expect(
      catalogue.entries({
        form: 'package-name',
        packageName: 'shop',
        module: 'Shop.Api',
        entity: 'Priced',
      }),
    ).toMatchObject([{ kind: 'interface' }]);
    expect(
      catalogue
        .implementersOf({ packageId: model.packageId, module: 'Shop.Api', name: 'Priced' })
        .map((e) => e.ref.name),
    ).toEqual(['Order']);
  });

  it('is the same for the same file', () => {
    expect(modelSignature(loadModel(MODEL, 'again.yaml'))).toEqual(sig);
  });
});
