import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/core/sha256-hex.js';
import { loadModel } from '../../../src/sandbox/model/load-model.js';
import type { ModelError } from '../../../src/sandbox/model/model-error.js';
import { modelErrorOf, positionOf as where } from './model-error-of.js';

const HEAD = `package:
  name: shop
  version: 1.0.0
templates:
`;

/** A model with one template whose body is `body` (indented by the caller). */
function model(body: string): string {
  return `${HEAD}  Shop:Order:
${body}`;
}

const ORDER = `    fields:
      buyer: Party
      seller: Party
      total: Numeric 2
      count: Int64
    signatories: [seller]
    observers: [buyer]
`;

const loadError = (text: string): ModelError => modelErrorOf(text, 'shop.yaml');

function expectError(text: string, needle: string, problem: RegExp, plus = 0): void {
  const e = loadError(text);
  expect(e.code).toBe('INVALID_MODEL');
  expect(e.problem).toMatch(problem);
  const [line, col] = where(text, needle, plus);
  expect([e.file, e.line, e.col]).toEqual(['shop.yaml', line, col]);
  expect(e.message.startsWith(`shop.yaml:${line}:${col}: `)).toBe(true);
}

describe('loadModel', () => {
  it('loads the invoices example', () => {
    const m = loadModel(
      readFileSync('examples/invoices/model.yaml', 'utf8'),
      'examples/invoices/model.yaml',
    );
    expect(m.name).toBe('invoices');
    // The id of the archive the encoder makes of the model's signature: the sha256 of the
    // payload the sandbox serves, as for any package; the same file gives the same id.
    expect(m.packageId).toMatch(/^[0-9a-f]{64}$/);
    expect(m.archive?.packageId).toBe(m.packageId);
    expect(sha256Hex(m.archive!.payload)).toBe(m.packageId);
    expect(m.archive?.signature).toMatchObject({ name: 'invoices', version: '1.0.0' });
    expect(
      loadModel(readFileSync('examples/invoices/model.yaml', 'utf8'), 'elsewhere.yaml').packageId,
    ).toBe(m.packageId);
    const invoice = m.templates.get('Invoice:Invoice')!;
    expect(invoice.templateId).toBe(`${m.packageId}:Invoice:Invoice`);
    expect([...invoice.choices.keys()].sort()).toEqual(['Accept', 'Archive', 'Cancel', 'Remind']);
    expect(invoice.choices.get('Remind')!.consuming).toBe(false);
    expect(invoice.choices.get('Archive')!.controllers).toEqual(invoice.signatories);
    expect(invoice.fields.find((f) => f.name === 'amount')!.type).toEqual({
      kind: 'Numeric',
      scale: 2,
    });
    expect(invoice.key?.type).toEqual({
      kind: 'Record',
      fields: [
        { name: 'issuer', type: { kind: 'Party' } },
        { name: 'reference', type: { kind: 'Text' } },
      ],
    });
    expect([...m.interfaces.keys()]).toEqual(['Payment:Payable']);
  });

  it('parses every supported type', () => {
    const m = loadModel(
      model(`    fields:
      a: Party
      b: Text
      c: Int64
      d: Numeric
      e: Decimal
      f: Bool
      g: Date
      h: Time
      i: ContractId Shop:Order
      j: Optional (List Party)
      k: '[Text]'
      l: TextMap Int64
      m: { enum: [Low, High] }
      n: { street: Text, zip: Optional Text }
    signatories: a
`),
      'shop.yaml',
    );
    const types = Object.fromEntries(
      m.templates.get('Shop:Order')!.fields.map((f) => [f.name, f.type]),
    );
    expect(types.d).toEqual({ kind: 'Numeric', scale: 10 });
    expect(types.e).toEqual({ kind: 'Numeric', scale: 10 });
    expect(types.h).toEqual({ kind: 'Timestamp' });
    expect(types.j).toEqual({ kind: 'Optional', of: { kind: 'List', of: { kind: 'Party' } } });
    expect(types.k).toEqual({ kind: 'List', of: { kind: 'Text' } });
    expect(types.m).toEqual({ kind: 'Enum', constructors: ['Low', 'High'] });
    expect(types.n?.kind).toBe('Record');
  });
});

describe('loadModel errors, each with file:line:col', () => {
  it('YAML syntax', () => {
    const text = `${HEAD}  Shop:Order: [unclosed\n`;
    const e = loadError(text);
    expect(e.problem).toMatch(/^YAML syntax/);
    expect(e.line).toBeGreaterThanOrEqual(5);
  });

  it('duplicate YAML key', () => {
    const text = model(`${ORDER}    signatories: [buyer]\n`);
    expect(loadError(text).problem).toMatch(/YAML syntax: .*[Uu]nique|duplicate/i);
  });

  it('missing package', () => {
    const text = `templates:\n  Shop:Order:\n${ORDER}`;
    expectError(text, 'templates', /"package" is missing/);
  });

  it('unknown key', () => {
    const text = model(`${ORDER}    signatorees: [seller]\n`);
    expectError(text, 'signatorees', /unknown key "signatorees"/);
  });

  it('missing signatories', () => {
    const text = model(`    fields:\n      buyer: Party\n`);
    expectError(text, 'Shop:Order', /"signatories" is missing/);
  });

  it('bad template name', () => {
    const text = `${HEAD}  order:\n${ORDER}`;
    expectError(text, 'order:', /name "order" is not allowed/);
  });

  it('bad package version', () => {
    const text = model(ORDER).replace('1.0.0', 'one');
    expectError(text, 'one', /invalid name: it must match/);
  });

  it('unknown type', () => {
    const text = model(ORDER.replace('Int64', 'Integer'));
    expectError(text, 'Integer', /unknown type "Integer"/);
  });

  it('Numeric scale out of range, pointing at the scale', () => {
    const text = model(ORDER.replace('Numeric 2', 'Numeric 40'));
    expectError(text, 'Numeric 40', /scale/, 8);
  });

  it('nested type without parentheses', () => {
    const text = model(ORDER.replace('Int64', 'Optional List Party'));
    expectError(text, 'Optional List Party', /parentheses/, 9);
  });

  it('signatory that is not a field', () => {
    const text = model(ORDER.replace('signatories: [seller]', 'signatories: [vendor]'));
    expectError(
      text,
      'vendor',
      /"vendor" is not a field here: name a Party field \(buyer, seller\)/,
    );
  });

  it('signatory field that is not a party', () => {
    const text = model(ORDER.replace('signatories: [seller]', 'signatories: [total]'));
    expectError(text, 'total]', /has type Numeric 2/);
  });

  it('CEL syntax error, at the exact column inside quotes', () => {
    const text = model(`${ORDER}    ensure: 'decimal(this.total) > '\n`);
    expectError(text, "decimal(this.total) > '", /CEL: /, 22);
  });

  it('CEL unknown variable, with the names in scope', () => {
    const text = model(`${ORDER}    ensure: total > 0\n`);
    expectError(text, 'total > 0', /CEL: .*total.*in scope here: this/);
  });

  it('CEL error inside a block scalar, on its own line', () => {
    const text = model(`${ORDER}    ensure: |\n      this.count != "0" &&\n        nope\n`);
    expectError(text, 'nope', /CEL: .*nope/);
  });

  it('unknown template in a create step', () => {
    const text = model(
      `${ORDER}    choices:\n      Ship:\n        controllers: [seller]\n        body:\n          - create: Shop:Parcel\n            with: {}\n`,
    );
    expectError(text, 'Shop:Parcel', /unknown template "Shop:Parcel"/);
  });

  it('unknown choice in an exercise step', () => {
    const text = model(
      `${ORDER}    choices:\n      Ship:\n        controllers: [seller]\n        body:\n          - exercise: Teleport\n            on: self\n            template: Shop:Order\n`,
    );
    expectError(text, 'Teleport', /has no choice "Teleport" \(choices: Ship, Archive\)/);
  });

  it('a step with two kinds', () => {
    const text = model(
      `${ORDER}    choices:\n      Ship:\n        controllers: [seller]\n        body:\n          - assert: 'true'\n            fetch: self\n`,
    );
    expectError(
      text,
      "assert: 'true'",
      /exactly one of create, exercise, fetch or assert \(found fetch and assert\)/,
    );
  });

  it('a key that does not belong to the step', () => {
    const text = model(
      `${ORDER}    choices:\n      Ship:\n        controllers: [seller]\n        body:\n          - assert: 'true'\n            as: ok\n`,
    );
    expectError(text, 'as: ok', /"as" does not belong in a assert step/);
  });

  it('a step name used twice', () => {
    const text = model(
      `${ORDER}    choices:\n      Ship:\n        controllers: [seller]\n        body:\n          - fetch: self\n            template: Shop:Order\n            as: o\n          - fetch: self\n            template: Shop:Order\n            as: o\n`,
    );
    const e = loadError(text);
    expect(e.problem).toMatch(/"o" is already in use/);
    expect(e.line).toBe(where(text, 'as: o')[0] + 3);
  });

  it('a later step result used too early', () => {
    const text = model(
      `${ORDER}    choices:\n      Ship:\n        controllers: [seller]\n        body:\n          - assert: later.count == "1"\n          - fetch: self\n            template: Shop:Order\n            as: later\n`,
    );
    expectError(text, 'later.count', /later.*in scope here: this, arg, self/);
  });

  it('redefining Archive', () => {
    const text = model(`${ORDER}    choices:\n      Archive:\n        controllers: [seller]\n`);
    expectError(text, 'Archive', /already has the consuming Archive choice/);
  });

  it('an unknown interface', () => {
    const text = model(`${ORDER}    implements:\n      Shop:Billable:\n        view: {}\n`);
    expectError(text, 'Shop:Billable', /unknown interface "Shop:Billable"/);
  });

  it('a ContractId of an unknown template', () => {
    const text = model(ORDER.replace('Int64', 'ContractId Shop:Nope'));
    expectError(text, 'ContractId Shop:Nope', /unknown template "Shop:Nope"/);
  });

  it('a bad duration literal in CEL', () => {
    const text = model(`${ORDER}    ensure: 'duration("soon") > duration("1h")'\n`);
    expectError(text, '"soon"', /not a duration/);
  });
});

describe('loadModel guards the parser and reports every problem', () => {
  it('refuses hostile nesting before the YAML parser sees it, at its line', () => {
    const deep = `${model(ORDER)}    ensure: ${'['.repeat(100_000)}\n`;
    const e = loadError(deep);
    expect(e.problem).toMatch(/model files do not nest that deep$/);
    expect(e.line).toBe(where(deep, 'ensure')[0]);
    const indented = `${model(ORDER)}${' '.repeat(300)}x: y\n`;
    expect(loadError(indented).problem).toMatch(/model files do not nest that deep$/);
  });

  it('refuses a file that is too large', () => {
    const e = loadError(`${model(ORDER)}# ${'x'.repeat(5 * 1024 * 1024)}\n`);
    expect([e.line, e.col]).toEqual([1, 1]);
    expect(e.problem).toMatch(/^the file is .*, more than the 4\.0 MiB a model file may have/);
  });

  it('refuses an alias bomb', () => {
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 12; i++) {
      lines.push(
        `a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    }
    expect(loadError(`${lines.join('\n')}\n`).problem).toMatch(/too many aliases/);
  });

  it('reports every schema problem, not only the first', () => {
    const text = model(`${ORDER}    signatorees: [seller]\n    ensur: 'true'\n`);
    const e = loadError(text);
    expect(e.problems.map((p) => [p.line, p.problem])).toEqual([
      [where(text, 'signatorees')[0], expect.stringMatching(/unknown key "signatorees"/)],
      [where(text, 'ensur:')[0], expect.stringMatching(/unknown key "ensur"/)],
    ]);
    expect(e.problems.map((p) => p.hint)).toEqual([
      'did you mean "signatories"?',
      'did you mean "ensure"?',
    ]);
    expect(e.message.split('\n')).toEqual([
      expect.stringMatching(/^shop\.yaml:\d+:5: unknown key "signatorees"/),
      '    hint: did you mean "signatories"?',
      expect.stringMatching(/^shop\.yaml:\d+:5: unknown key "ensur"/),
      '    hint: did you mean "ensure"?',
    ]);
  });

  it('reports every type, party, CEL and reference problem at once, each once', () => {
    const text = model(
      [
        ORDER.replace('Int64', 'Integer').replace('signatories: [seller]', 'signatories: [vendor]'),
        "    ensure: 'decimal(this.total) > '",
        '    choices:',
        '      Ship:',
        '        controllers: [count]',
        '        body:',
        '          - create: Shop:Parcel',
        '            with: {}',
        '          - exercise: Teleport',
        '            on: self',
        '            template: Shop:Order',
        '',
      ].join('\n'),
    );
    const e = loadError(text);
    expect(e.problems.map((p) => p.problem)).toEqual([
      expect.stringMatching(/unknown type "Integer"/),
      expect.stringMatching(/"vendor" is not a field here/),
      expect.stringMatching(/^CEL: /),
      // `count` did not parse: its type is not reported a second time.
      expect.stringMatching(/unknown template "Shop:Parcel"/),
      expect.stringMatching(/has no choice "Teleport"/),
    ]);
    expect(e.message.split('\n')[0]).toBe(
      `shop.yaml:${where(text, 'Integer').join(':')}: ${e.problems[0]!.problem}`,
    );
  });
});

describe('loadModel explains a value that fits none of its forms by its most telling error', () => {
  it('a type that is neither text, an enum nor a record of fields, and a bad field name in one', () => {
    const text = model(ORDER.replace('count: Int64', 'count: 42\n      addr: {1bad: Text}'));
    const e = loadError(text);
    expect(e.problems.map((p) => [p.line, p.col, p.problem])).toEqual([
      [...where(text, '42'), '`templates.Shop:Order.fields.count` must be text, not 42'],
      [...where(text, '1bad'), 'the name "1bad" is not allowed here'],
    ]);
  });

  it('a list where a value is expected, deep in a create step', () => {
    const text = model(
      `${ORDER}    choices:\n      Ship:\n        controllers: [seller]\n        body:\n          - create: Shop:Order\n            with: {total: [1]}\n`,
    );
    const e = loadError(text);
    expect(e.problems).toHaveLength(1);
    expect([e.line, e.col]).toEqual(where(text, '[1]'));
    expect(e.problem).toMatch(
      /`templates\.Shop:Order\.choices\.Ship\.body\[0\]\.with\.total` must be .*, not a list/,
    );
  });
});
