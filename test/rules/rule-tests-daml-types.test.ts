import { describe, expect, it } from 'vitest';
import { PackageCatalogue } from '../../src/daml-lf/package-catalogue.js';
import { formatRuleProblem } from '../../src/rules/rule-problem.js';
import {
  parseRuleTestFile,
  runRuleTests,
  type RuleTestFile,
  type RuleTestFileResult,
} from '../../src/rules/rule-tests/index.js';
import { loadModel } from '../../src/sandbox/model/load-model.js';
import { modelSignature } from '../../src/sandbox/model/model-signature.js';
import { rules } from './rule-fixtures.js';

// An escrow desk: the rule records when and how much, from the event.
const RULES = rules(`
version: 1
rules:
  - id: record
    on: { created: "#escrow:Escrow:Deposit", party: payer }
    then:
      - create:
          template: "#escrow:Escrow:Record"
          createArguments:
            at: "\${{ event.effectiveAt }}"
            amount: "\${{ string(decimal(event.createArgument.amount)) }}"
            scaled: "\${{ event.createArgument.amount }}"
            reference: "\${{ event.createArgument.reference }}"
        actAs: [payer]
`);

const MODEL = loadModel(
  `package: { name: escrow, version: 1.0.0 }
templates:
  Escrow:Deposit:
    fields: { payer: Party, amount: Numeric 10, reference: Text }
    signatories: [payer]
  Escrow:Record:
    fields: { payer: Party, at: Time, amount: Numeric 10, scaled: Numeric 10, reference: Text }
    signatories: [payer]
`,
  'escrow.yaml',
);
const PACKAGES = PackageCatalogue.create([modelSignature(MODEL)]);

function run(
  expectArgs: string,
  reference = 'INV-1',
  packages?: PackageCatalogue,
): RuleTestFileResult {
  const text = `
rules: ../rules
parties: { payer: "Payer::1220aaaa" }
tests:
  - name: records the deposit
    given:
      - created:
          template: "#escrow:Escrow:Deposit"
          effectiveAt: 2025-01-01T00:00:04Z
          createArgument: { payer: payer, amount: "1000.0000000000", reference: "${reference}" }
    expect:
      - create:
          template: "#escrow:Escrow:Record"
          createArguments: ${expectArgs}
`;
  const parsed = parseRuleTestFile('t.test.yaml', text);
  if (!parsed.ok) throw new Error(parsed.problems.map(formatRuleProblem).join('\n'));
  const file: RuleTestFile = parsed.file;
  return runRuleTests(file, RULES, packages === undefined ? {} : { packages });
}

function failures(r: RuleTestFileResult): string[] {
  return r.cases.flatMap((c) => c.failures.flat());
}

describe('rule-test expectations compare Daml values by meaning', () => {
  it('the same instant matches however it is written', () => {
    for (const at of [
      '2025-01-01T00:00:04Z',
      '2025-01-01T00:00:04.000Z',
      '2025-01-01T01:00:04+01:00',
      '2025-01-01T00:00:04.000000Z',
    ]) {
      expect(failures(run(`{ at: "${at}" }`))).toEqual([]);
    }
    expect(failures(run('{ at: "2025-01-01T00:00:05Z" }'))).not.toEqual([]);
  });

  it('the same decimal matches however it is written, text against text', () => {
    expect(failures(run('{ amount: "1000.0000000000", scaled: "1000.0" }'))).toEqual([]);
    expect(failures(run('{ amount: 1000, scaled: 1000.00 }'))).toEqual([]);
    expect(failures(run('{ amount: "1000.5" }'))).not.toEqual([]);
  });

  it('text that only looks like a number is compared as text without a model', () => {
    // No fraction on either side: as written.
    expect(failures(run('{ reference: "7" }', '007'))).not.toEqual([]);
  });

  it('with a model, by the Daml type: Text stays text, Numeric by value', () => {
    expect(failures(run('{ reference: "1.0" }', '1', PACKAGES))).not.toEqual([]);
    expect(failures(run('{ reference: "1.0" }', '1'))).toEqual([]); // without: both decimals
    expect(failures(run('{ amount: "1000", scaled: "1e3" }', 'x', PACKAGES))).toEqual([
      'expected command 1 (line 12) was not produced',
      '  closest: rule record, then[0] (- expected, + actual)',
      '  - create.createArguments.scaled: "1e3" (text; the field is a Daml Numeric 10)',
      '  + create.createArguments.scaled: "1000.0000000000" (decimal text; the field is a Daml Numeric 10)',
    ]);
    expect(
      failures(run('{ amount: "1000", at: "2025-01-01T00:00:04.000Z" }', 'x', PACKAGES)),
    ).toEqual([]);
  });

  it('the diff shows the kinds when they differ', () => {
    expect(failures(run('{ at: "2025-01-01" }'))).toEqual([
      'expected command 1 (line 12) was not produced',
      '  closest: rule record, then[0] (- expected, + actual)',
      '  - create.createArguments.at: "2025-01-01" (date text)',
      expect.stringMatching(
        /^ {2}\+ create\.createArguments\.at: "2025-01-01T00:00:04(\.0+)?Z" \(timestamp text\)$/,
      ),
    ]);
    // Same kind, different values: no kinds.
    expect(failures(run('{ at: "2025-01-01T00:00:05Z" }'))[3]).toMatch(/Z"$/);
  });
});
