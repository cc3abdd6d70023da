import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { PackageCatalogue } from '../../src/daml-lf/package-catalogue.js';
import { readDar } from '../../src/daml-lf/read-dar.js';
import { loadRules } from '../../src/rules/load-rules.js';
import { SHARED_DIR, skipWithoutShared } from '../support/shared-files.js';
import { syntheticDar } from '../support/synthetic-dar.js';
import { PARTIES } from './rule-fixtures.js';

/** Rules type-checked against packages read from DAR bytes, as `validate` and `run` do. */

async function catalogueOf(...dars: { bytes: Uint8Array; source: string }[]) {
  const signatures = [];
  for (const dar of dars) {
    const read = await readDar(dar.bytes, { source: dar.source });
    signatures.push(...read.packages.map((p) => p.signature));
  }
  return PackageCatalogue.create(signatures);
}

function problems(text: string, packages: PackageCatalogue): string[] {
  return loadRules([{ path: 'r.yaml', text }], { parties: PARTIES, packages }).problems.map(
    (p) => `${p.severity === 'warning' ? 'warning ' : ''}${p.code} ${p.line}:${p.col} ${p.message}`,
  );
}

// The synthetic packages (test/support/synthetic-dar.ts): Synthetic.Assets:Token implements
// Synthetic.Api:Asset; Token_Split takes splitAmount : Numeric 10.
const TOKEN_RULE = (when: string, choice: string, argument: string) => `version: 1
rules:
  - id: split-big-tokens
    on: { created: '#synthetic-assets:Synthetic.Assets:Token', party: payer }
    when: '${when}'
    then:
      - exercise:
          template: '#synthetic-assets:Synthetic.Assets:Token'
          contractId: '\${{ event.contractId }}'
          choice: ${choice}
          choiceArgument: ${argument}
        actAs: [payer]
      - exercise:
          template: '#synthetic-assets:Synthetic.Assets:Token'
          contractId: '\${{ event.contractId }}'
          choice: Token_Transfer
          choiceArgument: { newOwner: '\${{ parties.issuer }}' }
        actAs: [payer]
`;

describe('rules against a synthetic DAR (our encoder, read back by readDar)', async () => {
  const dar = syntheticDar();
  const catalogue = await catalogueOf({ bytes: dar.bytes, source: 'synthetic.dar' });

  it('a correct rule validates', () => {
    expect(
      problems(
        TOKEN_RULE(
          'decimal(event.createArgument.amount) > decimal("100") && event.createArgument.color == "Red"',
          'Token_Split',
          "{ splitAmount: '50.0' }",
        ),
        catalogue,
      ),
    ).toEqual([]);
  });

  it('a misspelt field, a misspelt choice, a wrong argument shape and a wrong literal: four located errors', () => {
    const misspelt = problems(
      TOKEN_RULE(
        'decimal(event.createArgument.amout) > decimal("100")',
        'Token_Splt',
        "{ splitAmount: '50.0' }",
      ),
      catalogue,
    );
    const shapes = problems(
      TOKEN_RULE(
        'event.createArgument.color == "Red"',
        'Token_Split',
        "{ splitAmount: '5.00000000001' }",
      ),
      catalogue,
    );
    const list = problems(
      TOKEN_RULE('event.createArgument.color == "Red"', 'Token_Split', "[ '50.0' ]"),
      catalogue,
    );
    expect([...misspelt, ...list, ...shapes]).toEqual([
      'UNKNOWN_FIELD 5:41 template Synthetic.Assets:Token has no field "amout"',
      'UNKNOWN_CHOICE 10:19 template Synthetic.Assets:Token has no choice "Token_Splt"',
      'BAD_ARGUMENT 11:27 expected a Token_Split record (a mapping of its fields), got a list',
      'BAD_LITERAL 11:42 "5.00000000001" has 11 digits after the point; a Numeric 10 has at most 10',
    ]);
  });

  it('rules with one trigger: each misspelt field at its own place, in every load', () => {
    const rule = (id: string, when: string): string =>
      TOKEN_RULE(when, 'Token_Split', "{ splitAmount: '50.0' }")
        .split('rules:\n')[1]!
        .replace('split-big-tokens', id);
    const text = `version: 1
rules:
${rule('a', 'decimal(event.createArgument.amout) > decimal("1")')}${rule('b', 'event.createArgument.color == "Red" && decimal(event.createArgument.amout) > decimal("1")')}${rule('c', 'decimal(event.createArgument.amount) > decimal("1")')}`;
    const expected = [
      'UNKNOWN_FIELD 5:41 template Synthetic.Assets:Token has no field "amout"',
      'UNKNOWN_FIELD 21:80 template Synthetic.Assets:Token has no field "amout"',
    ];
    expect(problems(text, catalogue)).toEqual(expected);
    expect(problems(text, catalogue)).toEqual(expected);
  });

  it('an interface of another package: event.view against its view type', () => {
    const text = `version: 1
rules:
  - id: assets
    on: { created: '#synthetic-api:Synthetic.Api:Asset', party: payer }
    when: 'event.view.label != null && event.view.ownr == parties.payer'
    then:
      - exercise: { interface: '#synthetic-api:Synthetic.Api:Asset', contractId: '\${{ event.contractId }}', choice: Asset_Transfer, choiceArgument: { newOwner: 7 } }
        actAs: [payer]
`;
    expect(problems(text, catalogue)).toEqual([
      'UNKNOWN_FIELD 5:51 the view of interface Synthetic.Api:Asset has no field "ownr"',
      'BAD_ARGUMENT 7:161 expected a Party (text), got the number 7',
    ]);
  });
});

const DEFINITIONS = 'daml-lf/dars/DamlDefinitionsServiceMain.dar';
const HOLDING = 'daml-lf/dars/splice-api-token-holding-v1-1.0.0.dar';
const sharedDar = (path: string) => ({ bytes: readFileSync(SHARED_DIR + path), source: path });

describe.skipIf(skipWithoutShared(DEFINITIONS))(
  'rules against DamlDefinitionsServiceMain.dar',
  () => {
    // Read in beforeAll: a skipped describe still runs its body to collect the tests, and a
    // lone clone has no ../shared to read.
    let catalogue: PackageCatalogue;
    beforeAll(async () => {
      catalogue = await catalogueOf(sharedDar(DEFINITIONS));
    });

    it('checks field types and literals of AllBuiltinTypesTemplate, and variants of another package', () => {
      const text = `version: 1
rules:
  - id: builtins
    on: { created: '#DamlDefinitionsServiceMain:MainApp:MainTemplate', party: payer }
    when: 'event.createArgument.externalRecord.tag == "x" && event.createArgument.someList.all(r, r.nope == 1)'
    then:
      - create:
          template: '#DamlDefinitionsServiceMain:MainApp:AllBuiltinTypesTemplate'
          createArguments: { someParty: '\${{ parties.payer }}', someInt: '1', someDecimal: '1.0', someNumeric7: '1.12345678', someText: t, someBool: true, someDate: 2025-02-30, someTime: '2025-01-01T00:00:00Z', relTime: { microseconds: '5' } }
        actAs: [payer]
`;
      const found = problems(text, catalogue);
      expect(found).toEqual([
        expect.stringMatching(
          /^UNKNOWN_FIELD 5:\d+ an item of field "someList" has no field "nope"$/,
        ),
        expect.stringMatching(
          /^BAD_LITERAL 9:\d+ "1.12345678" has 8 digits after the point; a Numeric 7 has at most 7$/,
        ),
        expect.stringMatching(/^BAD_LITERAL 9:\d+ "2025-02-30" is not a Date$/),
      ]);
    });
  },
);

describe.skipIf(skipWithoutShared(HOLDING))(
  'rules against the token standard holding interface',
  () => {
    // Read in beforeAll: a skipped describe still runs its body to collect the tests, and a
    // lone clone has no ../shared to read.
    let catalogue: PackageCatalogue;
    beforeAll(async () => {
      catalogue = await catalogueOf(sharedDar(HOLDING));
    });

    it('event.view is a HoldingView: nested records, an Optional Lock, a Decimal amount', () => {
      const text = `version: 1
rules:
  - id: holdings
    on: { created: '#splice-api-token-holding-v1:Splice.Api.Token.HoldingV1:Holding', party: payer }
    when:
      - 'event.view.instrumentId.id == "Amulet" && decimal(event.view.amount) > decimal("10")'
      - 'event.view.lock.holders.size() > 0 || event.view.amout < decimal("1")'
    then:
      - exercise: { template: '#splice-api-token-holding-v1:Splice.Api.Token.HoldingV1:Holding', contractId: x, choice: Archive }
        actAs: [payer]
`;
      expect(problems(text, catalogue)).toEqual([
        'warning UNGUARDED_OPTIONAL 7:26 field "lock" is an Optional: reading "holders" below it fails when it is None (null)',
        'UNKNOWN_FIELD 7:59 the view of interface Splice.Api.Token.HoldingV1:Holding has no field "amout"',
        expect.stringMatching(
          /^REF_KIND 9:\d+ #splice-api-token-holding-v1:Splice.Api.Token.HoldingV1:Holding is an interface: write `interface:/,
        ),
      ]);
    });
  },
);
