import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadModel } from '../../../src/sandbox/model/load-model.js';
import type { ModelError } from '../../../src/sandbox/model/model-error.js';
import { syntheticDar } from '../../support/synthetic-dar.js';
import { modelErrorOf, positionOf as where } from './model-error-of.js';

// A model that describes a DAR's package (same name and version): the DAR's types, checked.
const FILE = fileURLToPath(new URL('../fixtures/synthetic-assets.model.yaml', import.meta.url));
const TEXT = readFileSync(FILE, 'utf8');
const dar = syntheticDar();
const packages = dar.catalogue;

const problems = (text: string): ModelError => modelErrorOf(text, 'm.yaml', { packages });

/** The one problem at `needle`'s position matches `message`. */
function expectAt(text: string, needle: string, message: RegExp): void {
  const e = problems(text);
  const [line, col] = where(text, needle);
  const found = e.problems.find((p) => p.line === line && p.col === col);
  expect(found?.problem, e.message).toMatch(message);
}

const HEAD = `package: { name: synthetic-assets, version: 1.0.0 }
templates:
`;

describe('a model that describes a DAR’s package', () => {
  const model = loadModel(TEXT, FILE, { packages });
  const token = model.templates.get('Synthetic.Assets:Token')!;

  it('is that package: its id, the DAR’s types, and no archive of its own', () => {
    expect(model.source).toBe('dar');
    expect(model.packageId).toBe(dar.main.packageId);
    expect(model.archive).toBeNull();
    expect(token.templateId).toBe(`${dar.main.packageId}:Synthetic.Assets:Token`);
    expect(token.behaviour).toBe('model');
    expect(token.fields.map((f) => f.name)).toEqual([
      'issuer',
      'owner',
      'amount',
      'color',
      'shape',
      'tags',
      'meta',
      'note',
      'pair',
      'expires',
      'limits',
      'issued',
      'flag',
    ]);
    // The choice the model implements, with the DAR's types; the one it does not, unimplemented.
    expect(token.choices.get('Token_Peek')).toMatchObject({
      implemented: true,
      consuming: false,
      returns: { kind: 'Numeric', scale: 10 },
    });
    expect(token.choices.get('Token_Transfer')).toMatchObject({ implemented: false });
    // The DAR's template the model says nothing of runs without behaviour.
    expect(model.templates.get('Synthetic.Assets:Note')!.behaviour).toBe('none');
  });

  it('implements the DAR’s interfaces as the model says', () => {
    const [instance] = [...token.implements.values()];
    expect(instance!.interface.interfaceId).toBe(
      `${dar.packages[0]!.packageId}:Synthetic.Api:Asset`,
    );
    expect(instance!.view).not.toBeNull();
    expect(instance!.choices.get('Asset_Transfer')!.implemented).toBe(true);
    expect(instance!.choices.get('Asset_Describe')!.implemented).toBe(false);
  });

  it('checks declared fields against the DAR’s, each mismatch where it is written', () => {
    const text = `${HEAD}  Synthetic.Assets:Note:
    fields: { owner: Party, text: Int64, extra: Text }
    signatories: [owner]
`;
    expectAt(text, 'text: Int64', /declared Int64, but the DAR's type is Text/);
    expectAt(text, 'extra: Text', /the DAR has no field "extra" here \(fields: owner, text\)/);
    const missing = `${HEAD}  Synthetic.Assets:Note:
    fields: { owner: Party }
    signatories: [owner]
`;
    expectAt(missing, 'fields: { owner', /the DAR's field "text" \(Text\) is not declared/);
    const variant = `${HEAD}  Synthetic.Assets:Token:
    fields: { issuer: Party, owner: Party, amount: Numeric 10, color: { enum: [Red, Green, Blue] }, shape: Text, tags: List Text, meta: TextMap Text, note: Optional Text, pair: { first: Int64, second: Text }, expires: Optional Time, limits: TextMap Int64, issued: Date, flag: Bool }
    signatories: [issuer]
`;
    expectAt(variant, 'shape: Text', /Synthetic.Assets:Shape, which a model cannot write: leave/);
    expectAt(variant, 'limits: TextMap', /the DAR's type is Map Text Int64/);
  });

  it('refuses a template, a choice or an interface the DAR’s package does not have', () => {
    const text = `${HEAD}  Synthetic.Assets:Coin:
    fields: { owner: Party }
    signatories: [owner]
  Synthetic.Assets:Note:
    signatories: [owner]
    choices:
      Edit: { controllers: [owner] }
      Archive2: { controllers: [owner] }
    implements:
      '#synthetic-api:Synthetic.Api:Asset': { view: {} }
`;
    expectAt(
      text,
      'Synthetic.Assets:Coin:',
      /has no template Synthetic.Assets:Coin \(its templates: Synthetic.Assets:Token, Synthetic.Assets:Note\)/,
    );
    expectAt(text, 'Edit:', /has no choice "Edit" \(its choices: none\)/);
    expectAt(
      text,
      "'#synthetic-api:Synthetic.Api:Asset'",
      /the DAR's template Synthetic.Assets:Note does not implement #synthetic-api:Synthetic.Api:Asset \(it implements: no interface\)/,
    );
  });

  it('checks a choice’s declared types and a key’s', () => {
    const text = `${HEAD}  Synthetic.Assets:Token:
    signatories: [issuer]
    key:
      type: { first: Party, second: Text }
      value: { first: this.issuer, second: this.owner }
      maintainers: [issuer]
    choices:
      Token_Peek: { controllers: [owner], consuming: true, returns: Numeric 2 }
      Token_Transfer: { controllers: [owner], argument: { newOwner: Text } }
`;
    expectAt(
      text,
      '{ first: Party, second: Text }',
      /second: declared Text, but the DAR's type is Party/,
    );
    expectAt(text, 'true, returns', /the DAR's Token_Peek is non-consuming/);
    expectAt(
      text,
      'Numeric 2 }',
      /declared Numeric 2, but the DAR's type is Numeric 10 \(result of Token_Peek\)/,
    );
    expectAt(
      text,
      'newOwner: Text',
      /declared Text, but the DAR's type is Party \(argument of Token_Transfer\)/,
    );
  });

  it('needs fields in a model of its own package', () => {
    const text = `package: { name: mine, version: 1.0.0 }
templates:
  M:T:
    signatories: [owner]
`;
    expectAt(
      text,
      'M:T:',
      /template M:T needs "fields": only a model that describes a DAR's package/,
    );
  });
});
