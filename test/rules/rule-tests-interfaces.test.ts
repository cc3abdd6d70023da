import { describe, expect, it } from 'vitest';
import { loadRules } from '../../src/rules/load-rules.js';
import { formatRuleProblem } from '../../src/rules/rule-problem.js';
import { parseRuleTestFile, runRuleTests } from '../../src/rules/rule-tests/index.js';
import { CATALOGUE } from './interface-fixtures.js';
import { PARTIES } from './rule-fixtures.js';

// Rule tests give interface views (or a failed one) to created events and active contracts,
// implementedInterfaces to archives and interfaceId to exercises, all as `#name:Module:Entity`.
const LOADED = loadRules(
  [
    {
      path: 'r.yaml',
      text: `version: 1
rules:
  - id: big
    on: { created: '#holdings:Holdings.Api:Holding', party: payer }
    when: decimal(event.view.amount) >= decimal("100")
    then:
      - exercise: { interface: '#holdings:Holdings.Api:Holding', contractId: '\${{ event.contractId }}', choice: Transfer, choiceArgument: { to: '\${{ parties.issuer }}', amount: '\${{ event.view.amount }}' } }
        actAs: [payer]
  - id: gone
    on: { archived: '#holdings:Holdings.Api:Holding', party: payer }
    then:
      - create: { template: '#tokens:Token:Token', createArguments: { issuer: '\${{ parties.issuer }}', owner: '\${{ parties.payer }}', amount: '\${{ event.contractId }}' } }
        actAs: [payer]
  - id: sweep
    schedule: { cron: '0 9 * * *' }
    forEach: { activeContracts: '#holdings:Holdings.Api:Holding', party: payer }
    when: contract.view.owner == parties.payer
    then:
      - exercise: { interface: '#holdings:Holdings.Api:Holding', contractId: '\${{ contract.contractId }}', choice: Transfer, choiceArgument: { to: '\${{ parties.payer }}', amount: '1.0' } }
        actAs: [payer]
`,
    },
  ],
  { parties: PARTIES, packages: CATALOGUE },
);

it('the rules load against the catalogue', () => {
  expect(LOADED.problems).toEqual([]);
});

const RULES = LOADED.ruleSet;

function run(tests: string) {
  const text = `rules: r.yaml
parties: { payer: "${PARTIES.payer}", issuer: "${PARTIES.issuer}" }
tests:
${tests}`;
  const parsed = parseRuleTestFile('t.test.yaml', text);
  if (!parsed.ok) return parsed.problems.map(formatRuleProblem);
  return runRuleTests(parsed.file, RULES).cases.map((c) => [c.name, c.failures.flat()]);
}

describe('rule tests of interface rules', () => {
  it('a created event with an interface view, an archive that implements the interface', () => {
    expect(
      run(`  - name: a big holding is transferred
    given:
      - created:
          template: '#tokens:Token:Token'
          contractId: '00t1'
          interfaceViews:
            - interface: '#holdings:Holdings.Api:Holding'
              view: { owner: 'Payer::1220aaaa', amount: 150 }
    expect:
      - exercise: { template: '#holdings:Holdings.Api:Holding', contractId: '00t1', choice: Transfer }
  - name: a small one is not
    given:
      - created:
          template: '#tokens:Token:Token'
          interfaceViews: [{ interface: '#holdings:Holdings.Api:Holding', view: { amount: '99.99' } }]
    expect: []
  - name: a token without the interface view is not a holding
    given: [{ created: { template: '#tokens:Token:Token' } }]
    expect: []
  - name: an archive of a holding
    given:
      - archived: { template: '#tokens:Token:Token', contractId: '00t2', implementedInterfaces: '#holdings:Holdings.Api:Holding' }
    expect:
      - create: { template: '#tokens:Token:Token', createArguments: { amount: '00t2' } }
`),
    ).toEqual([
      ['a big holding is transferred', []],
      ['a small one is not', []],
      ['a token without the interface view is not a holding', []],
      ['an archive of a holding', []],
    ]);
  });

  it('a failed view, expected as a rule error', () => {
    expect(
      run(`  - name: the view fails
    given:
      - created:
          template: '#tokens:Token:Token'
          interfaceViews: [{ interface: '#holdings:Holdings.Api:Holding', error: 'no view for you' }]
    expect: []
    expectErrors: [{ rule: big, code: INTERFACE_VIEW_FAILED, message: no view for you }]
  - name: another package's interface of the same name is not it
    given:
      - created:
          template: '#tokens:Token:Token'
          interfaceViews: [{ interface: '#other:Holdings.Api:Holding', view: { amount: 500 } }]
    expect: []
`),
    ).toEqual([
      ['the view fails', []],
      ["another package's interface of the same name is not it", []],
    ]);
  });

  it('contracts of a slot with views', () => {
    expect(
      run(`  - name: sweep my holdings
    slot: 2025-03-04T09:00:00Z
    contracts:
      - template: '#tokens:Token:Token'
        contractId: '00mine'
        interfaceViews: [{ interface: '#holdings:Holdings.Api:Holding', view: { owner: 'Payer::1220aaaa' } }]
      - template: '#tokens:Token:Token'
        interfaceViews: [{ interface: '#holdings:Holdings.Api:Holding', view: { owner: 'Issuer::1220bbbb' } }]
    expect:
      - exercise: { contractId: '00mine', choice: Transfer }
`),
    ).toEqual([['sweep my holdings', []]]);
  });

  it('a bad interface reference in a test file is located', () => {
    expect(
      run(`  - name: bad
    given:
      - created:
          template: '#tokens:Token:Token'
          interfaceViews: [{ interface: 'Holding', view: {} }]
    expect: []
`),
    ).toEqual([
      't.test.yaml:8:41: "Holding" is not an interface reference\n    hint: write "#package-name:Module:Interface"',
    ]);
  });
});
