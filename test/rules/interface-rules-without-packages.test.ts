import { describe, expect, it } from 'vitest';
import { PackageCatalogue } from '../../src/daml-lf/package-catalogue.js';
import { loadRules } from '../../src/rules/load-rules.js';
import { BURN, CATALOGUE, ON_HOLDING, oneRule, problemsOf } from './interface-fixtures.js';
import { PARTIES } from './rule-fixtures.js';
import { pkg, T } from './signature-builder.js';

// Without the package that says a reference is an interface, a rule on it is taken as a rule on
// a template, which has no `view`: reading `event.view` / `contract.view` is then a warning
// (the rule may well be an interface rule), and stays an error where a package says the
// reference is a template.

const VIEW_WARNING = (variable: string, ref: string) =>
  `warning UNKNOWN_EVENT_FIELD ${variable === 'event' ? '5:18' : '6:21'} ${variable}.view is the view of an interface, and no package given says whether "${ref}" is one: without its package it is taken as a template, which has no view (give the package to check the rule and to run it on the interface: validate or test with --dar FILE or --model FILE, or --config with ledger.packages or a participant (run reads the participant's packages))`;

const HOLDING = '#holdings:Holdings.Api:Holding';
const FOR_EACH = `    schedule: { cron: '0 9 * * *' }
    forEach: { activeContracts: '${HOLDING}', party: payer }`;
const BURN_CONTRACT = BURN.replace('event.contractId', 'contract.contractId');

function load(text: string) {
  return loadRules([{ path: 'r.yaml', text }], { parties: PARTIES });
}

/** The problems without any package, as problemsOf writes them. */
function withoutPackages(text: string): string[] {
  return load(text).problems.map(
    (p) =>
      `${p.severity === 'warning' ? 'warning ' : ''}${p.code} ${p.line}:${p.col} ${p.message}${p.hint === undefined ? '' : ` (${p.hint})`}`,
  );
}

describe('event.view and contract.view without the packages', () => {
  it('a created rule: a warning, and the rule loads', () => {
    const text = oneRule(ON_HOLDING, BURN, 'event.view.owner == "x::1"');
    expect(withoutPackages(text)).toEqual([VIEW_WARNING('event', HOLDING)]);
    expect(load(text).ruleSet.rules).toHaveLength(1);
  });

  it('a forEach rule: a warning for contract.view', () => {
    const text = oneRule(FOR_EACH, BURN_CONTRACT, 'contract.view.owner == "x::1"');
    expect(withoutPackages(text)).toEqual([VIEW_WARNING('contract', HOLDING)]);
    expect(load(text).ruleSet.rules).toHaveLength(1);
  });

  it('packages that do not have the reference’s package: the same warning, after UNKNOWN_PACKAGE', () => {
    const other = PackageCatalogue.create([
      pkg('elsewhere', '1.0.0', { 'E:T': { template: { p: T.party } } }),
    ]);
    const problems = problemsOf(oneRule(ON_HOLDING, BURN, 'event.view.owner == "x::1"'), other);
    expect(problems).toEqual([
      expect.stringMatching(/^warning UNKNOWN_PACKAGE 4:20 no known package is named "holdings"/),
      VIEW_WARNING('event', HOLDING),
      expect.stringMatching(/^warning UNKNOWN_PACKAGE 7:\d+ no known package is named "tokens"/),
    ]);
  });

  it('each read of view is one warning; other unknown event fields stay errors', () => {
    expect(
      withoutPackages(
        oneRule(ON_HOLDING, BURN, 'event.view.owner == "x::1" && event.craeteArgument.a == 1'),
      ),
    ).toEqual([
      VIEW_WARNING('event', HOLDING),
      expect.stringMatching(
        /^UNKNOWN_EVENT_FIELD 5:\d+ a created event has no field "craeteArgument" \(did you mean "createArgument"\?/,
      ),
    ]);
  });

  it('still an error where no interface could give a view: archived and exercised rules', () => {
    const archived = `    on: { archived: '${HOLDING}', party: payer }`;
    expect(withoutPackages(oneRule(archived, BURN, 'event.view.owner == "x::1"'))).toEqual([
      expect.stringMatching(/^UNKNOWN_EVENT_FIELD 5:18 an archived event has no field "view"/),
    ]);
    const exercised = `    on: { exercised: { interface: '${HOLDING}', choice: Transfer }, party: payer }`;
    expect(withoutPackages(oneRule(exercised, BURN, 'event.view.owner == "x::1"'))).toEqual([
      expect.stringMatching(/^UNKNOWN_EVENT_FIELD 5:18 an exercised event has no field "view"/),
    ]);
  });

  it('still an error when a package says the reference is a template', () => {
    const onToken = `    on: { created: '#tokens:Token:Token', party: payer }`;
    expect(problemsOf(oneRule(onToken, BURN, 'event.view.owner == "x::1"'), CATALOGUE)).toEqual([
      expect.stringMatching(/^UNKNOWN_EVENT_FIELD 5:18 a created event has no field "view"/),
    ]);
  });

  it('with the interface’s package: no problem, and the rule is an interface rule', () => {
    const text = oneRule(ON_HOLDING, BURN, 'event.view.owner == "x::1"');
    expect(problemsOf(text, CATALOGUE)).toEqual([]);
    expect(
      loadRules([{ path: 'r.yaml', text }], { parties: PARTIES, packages: CATALOGUE }).ruleSet
        .rules[0]?.trigger,
    ).toMatchObject({ refKind: 'interface' });
  });
});
