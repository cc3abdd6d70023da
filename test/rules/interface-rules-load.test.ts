import { describe, expect, it } from 'vitest';
import { PackageCatalogue } from '../../src/daml-lf/package-catalogue.js';
import { pkg } from './signature-builder.js';
import { loadRules } from '../../src/rules/load-rules.js';
import {
  BURN,
  CATALOGUE,
  COMPLETE,
  HOLDINGS,
  oneRule,
  ON_HOLDING,
  problemsOf,
  TOKENS,
} from './interface-fixtures.js';
import { PARTIES } from './rule-fixtures.js';

const TRANSFER = (key = 'interface', ref = '#holdings:Holdings.Api:Holding', choice = 'Transfer') =>
  `      - exercise: { ${key}: '${ref}', contractId: '\${{ event.contractId }}', choice: ${choice}, choiceArgument: { to: '\${{ parties.issuer }}', amount: '1.0' } }`;

function compiled(text: string, packages: typeof CATALOGUE | null = CATALOGUE) {
  const { ruleSet, problems } = loadRules([{ path: 'r.yaml', text }], {
    parties: PARTIES,
    ...(packages === null ? {} : { packages }),
  });
  expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
  return ruleSet.rules[0]!;
}

describe('interface references: the catalogue says what a reference names', () => {
  it('created, archived and forEach on an interface get refKind interface', () => {
    expect(compiled(oneRule(ON_HOLDING, BURN)).trigger).toMatchObject({
      kind: 'created',
      refKind: 'interface',
    });
    const archived = `    on: { archived: '#holdings:Holdings.Api:Holding', party: payer }`;
    expect(compiled(oneRule(archived, BURN)).trigger).toMatchObject({ refKind: 'interface' });
    const schedule = `    schedule: { cron: '0 9 * * *' }
    forEach: { activeContracts: '#holdings:Holdings.Api:Holding', party: payer }`;
    const burn = BURN.replace('event.contractId', 'contract.contractId');
    expect(compiled(oneRule(schedule, burn)).trigger).toMatchObject({
      forEach: { refKind: 'interface' },
    });
    expect(
      compiled(
        oneRule(ON_HOLDING.replace('#holdings:Holdings.Api:Holding', '#tokens:Token:Token'), BURN),
      ).trigger,
    ).toMatchObject({ refKind: 'template' });
  });

  it('without a catalogue a reference is a template, unless `interface:` says otherwise', () => {
    const rule = compiled(oneRule(ON_HOLDING, TRANSFER()), null);
    expect(rule.trigger).toMatchObject({ refKind: 'template' });
    expect(rule.then[0]).toMatchObject({ kind: 'exercise', refKind: 'interface' });
  });

  it('exercised and exercise take `interface:` for an interface choice', () => {
    const on = `    on: { exercised: { interface: '#holdings:Holdings.Api:Holding', choice: Transfer }, party: payer }`;
    const rule = compiled(
      oneRule(on, TRANSFER(), 'decimal(event.choiceArgument.amount) > decimal("0")'),
    );
    expect(rule.trigger).toMatchObject({
      kind: 'exercised',
      refKind: 'interface',
      choice: 'Transfer',
    });
    expect(rule.then[0]).toMatchObject({ refKind: 'interface', choice: 'Transfer' });
  });

  it('event.view is the interface view, checked against its type', () => {
    expect(problemsOf(oneRule(ON_HOLDING, BURN, 'event.view.amout == "1"'))).toEqual([
      'UNKNOWN_FIELD 5:23 the view of interface Holdings.Api:Holding has no field "amout" (did you mean "amount"?)',
    ]);
    expect(problemsOf(oneRule(ON_HOLDING, BURN, 'event.view.note == null'))).toEqual([]);
  });

  it('a template rule has no event.view', () => {
    const on = ON_HOLDING.replace('#holdings:Holdings.Api:Holding', '#tokens:Token:Token');
    const [problem] = problemsOf(oneRule(on, BURN, 'event.view.owner == "x"'));
    expect(problem).toMatch(
      /^UNKNOWN_EVENT_FIELD 5:\d+ a created event has no field "view" .*interface view of a rule on an interface/,
    );
  });
});

describe('interface references: every mistake, located', () => {
  it('`template:` naming an interface in exercised and exercise', () => {
    const on = `    on: { exercised: { template: '#holdings:Holdings.Api:Holding', choice: Transfer }, party: payer }`;
    expect(problemsOf(oneRule(on, TRANSFER('template')))).toEqual([
      "REF_KIND 4:34 #holdings:Holdings.Api:Holding is an interface: write `interface: '#holdings:Holdings.Api:Holding'` instead of `template:` (an interface choice is exercised through the interface, on any contract whose template implements it)",
      "REF_KIND 6:31 #holdings:Holdings.Api:Holding is an interface: write `interface: '#holdings:Holdings.Api:Holding'` instead of `template:` (an interface choice is exercised through the interface, on any contract whose template implements it)",
    ]);
  });

  it('`interface:` naming a template', () => {
    expect(
      problemsOf(oneRule(ON_HOLDING, TRANSFER('interface', '#tokens:Token:Token', 'Burn'))),
    ).toEqual([
      "REF_KIND 6:32 #tokens:Token:Token is a template, not an interface (write `template: '#tokens:Token:Token'`, or name an interface it implements: #holdings:Holdings.Api:Holding)",
    ]);
  });

  it('create, createAndExercise and exerciseByKey need a template', () => {
    const create = `      - create: { template: '#holdings:Holdings.Api:Holding', createArguments: {} }`;
    expect(problemsOf(oneRule(ON_HOLDING, create))).toEqual([
      'REF_KIND 6:29 #holdings:Holdings.Api:Holding is an interface: create needs a template, since an interface has no contracts of its own (create a template that implements it (e.g. #tokens:Token:Token))',
    ]);
    const byKey = `      - exerciseByKey: { template: '#holdings:Holdings.Api:Holding', contractKey: 'x', choice: Transfer }`;
    expect(problemsOf(oneRule(ON_HOLDING, byKey))[0]).toMatch(
      /^REF_KIND 6:36 #holdings:Holdings.Api:Holding is an interface: exerciseByKey needs a template with a contract key \(exercise the interface choice by contract id/,
    );
    for (const kind of ['createAndExercise', 'exerciseByKey']) {
      const action = `      - ${kind}: { interface: '#holdings:Holdings.Api:Holding', ${kind === 'exerciseByKey' ? "contractKey: 'x'" : 'createArguments: {}'}, choice: Transfer }`;
      // Refused with or without a catalogue: the command itself cannot name an interface.
      for (const packages of [CATALOGUE, undefined]) {
        expect(problemsOf(oneRule(ON_HOLDING, action), packages)).toEqual([
          expect.stringMatching(
            new RegExp(
              `^REF_KIND 6:${kind.length + 13} ${kind} (creates a contract|needs a template)`,
            ),
          ),
        ]);
      }
    }
  });

  it('both `template:` and `interface:`, or neither', () => {
    const both = `      - exercise: { template: '#tokens:Token:Token', interface: '#holdings:Holdings.Api:Holding', contractId: x, choice: Burn }`;
    expect(problemsOf(oneRule(ON_HOLDING, both))).toEqual([
      'SCHEMA 6:19 `exercise` has both `template` and `interface`; give one (`interface:` exercises an interface choice on any contract that implements it; `template:` names the template)',
    ]);
    const neither = `      - exercise: { contractId: x, choice: Burn }`;
    expect(problemsOf(oneRule(ON_HOLDING, neither))).toEqual([
      'MISSING_KEY 6:19 `exercise` has no `template` (add `template: "#pkg:Module:Entity"` (or `interface:` for a choice of an interface))',
    ]);
  });

  it('an interface choice exercised by template id, and an unknown interface choice', () => {
    const byTemplate = `      - exercise: { template: '#tokens:Token:Token', contractId: x, choice: Transfer }`;
    expect(problemsOf(oneRule(ON_HOLDING, byTemplate))).toEqual([
      'UNKNOWN_CHOICE 6:77 template Token:Token has no choice "Transfer" ("Transfer" is a choice of the interface #holdings:Holdings.Api:Holding, which it implements: write `interface: \'#holdings:Holdings.Api:Holding\'` to exercise it)',
    ]);
    expect(
      problemsOf(
        oneRule(ON_HOLDING, TRANSFER('interface', '#holdings:Holdings.Api:Holding', 'Transfr')),
      ),
    ).toEqual([
      'UNKNOWN_CHOICE 6:113 interface Holdings.Api:Holding has no choice "Transfr" (did you mean "Transfer"?)',
    ]);
  });

  it('an unknown interface, and an unknown package: a warning, an error when the catalogue is complete', () => {
    expect(
      problemsOf(oneRule(ON_HOLDING, TRANSFER('interface', '#holdings:Holdings.Api:Holdin'))),
    ).toEqual([
      'UNKNOWN_INTERFACE 6:32 unknown interface "#holdings:Holdings.Api:Holdin": package "holdings" has no interface Holdings.Api:Holdin (did you mean "#holdings:Holdings.Api:Holding"?)',
    ]);
    const other = ON_HOLDING.replace('#holdings:', '#holding:');
    expect(problemsOf(oneRule(other, BURN))).toEqual([
      'warning UNKNOWN_PACKAGE 4:20 no known package is named "holding", so its types are not checked (did you mean "#holdings:Holdings.Api:Holding"?)',
    ]);
    expect(problemsOf(oneRule(other, BURN), COMPLETE)).toEqual([
      'UNKNOWN_PACKAGE 4:20 no known package is named "holding" (did you mean "#holdings:Holdings.Api:Holding"?)',
    ]);
    const unrelated = ON_HOLDING.replace('#holdings:', '#zzzzzz:');
    expect(problemsOf(oneRule(unrelated, BURN), COMPLETE)).toEqual([
      'UNKNOWN_PACKAGE 4:20 no known package is named "zzzzzz" (the participant has: holdings, tokens)',
    ]);
    // Many packages (a DAR brings the SDK's): a dozen names, the SDK's last, and how many more.
    const sdk = Array.from({ length: 20 }, (_, i) => pkg(`daml-prim-${i}`, '1.0.0', {}));
    const many = PackageCatalogue.create([...sdk, HOLDINGS, TOKENS], { complete: true });
    expect(problemsOf(oneRule(unrelated, BURN), many)).toEqual([
      `UNKNOWN_PACKAGE 4:20 no known package is named "zzzzzz" (the participant has: holdings, tokens, ${sdk
        .map((p) => p.name)
        .sort()
        .slice(0, 10)
        .join(', ')} and 10 more (ledgerbot packages list shows them all))`,
    ]);
  });
});

describe('package-id references against the catalogue', () => {
  it('a known id is checked like a name; an unknown one is an unknown package', () => {
    const byId = ON_HOLDING.replace('#holdings', HOLDINGS.packageId);
    expect(problemsOf(oneRule(byId, BURN))).toEqual([
      expect.stringMatching(/^warning PACKAGE_ID_REF 4:20 /),
    ]);
    const unknown = ON_HOLDING.replace('#holdings', 'f'.repeat(64));
    expect(problemsOf(oneRule(unknown, BURN), COMPLETE)).toEqual([
      expect.stringMatching(/^warning PACKAGE_ID_REF 4:20 /),
      `UNKNOWN_PACKAGE 4:20 no known package has the id ${'f'.repeat(64)} (the participant has: holdings, tokens)`,
    ]);
  });
});
