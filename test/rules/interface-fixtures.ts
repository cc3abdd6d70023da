import { PackageCatalogue } from '../../src/daml-lf/package-catalogue.js';
import { loadRules } from '../../src/rules/load-rules.js';
import { PARTIES } from './rule-fixtures.js';
import { con, pkg, T } from './signature-builder.js';

/**
 * A token standard in miniature: the interface `#holdings:Holdings.Api:Holding` (view: owner,
 * amount, an Optional note) with a `Transfer` choice, implemented by `#tokens:Token:Token`
 * (another package, as on the Canton Network), which has a key and its own `Burn` choice.
 */
export const HOLDINGS = pkg('holdings', '1.0.0', {
  'Holdings.Api:Holding': {
    interface: con('Holdings.Api:HoldingView'),
    choices: {
      Transfer: { argument: { to: T.party, amount: T.numeric(10) }, result: T.cid(T.unit) },
    },
  },
  'Holdings.Api:HoldingView': {
    record: { owner: T.party, amount: T.numeric(10), note: T.opt(T.text) },
  },
});

const HOLDING_REF = {
  packageId: HOLDINGS.packageId,
  module: 'Holdings.Api',
  name: 'Holding',
};

export const TOKENS = pkg('tokens', '2.0.0', {
  'Token:Token': {
    template: { issuer: T.party, owner: T.party, amount: T.numeric(10) },
    choices: { Burn: {} },
    key: T.party,
    implements: [HOLDING_REF],
  },
});

export const HOLDING_ID = `${HOLDINGS.packageId}:Holdings.Api:Holding`;
export const TOKEN_ID = `${TOKENS.packageId}:Token:Token`;

export const CATALOGUE = PackageCatalogue.create([HOLDINGS, TOKENS]);
export const COMPLETE = PackageCatalogue.create([HOLDINGS, TOKENS], { complete: true });

/** The problems of rule file text, as `code line:col message (hint)` lines. */
export function problemsOf(text: string, packages: PackageCatalogue | undefined = CATALOGUE) {
  return loadRules([{ path: 'r.yaml', text }], {
    parties: PARTIES,
    ...(packages === undefined ? {} : { packages }),
  }).problems.map(
    (p) =>
      `${p.severity === 'warning' ? 'warning ' : ''}${p.code} ${p.line}:${p.col} ${p.message}${p.hint === undefined ? '' : ` (${p.hint})`}`,
  );
}

/** A rule file of one rule: `trigger` and `then` are YAML lines (indented for the rule). */
export function oneRule(trigger: string, then: string, when = ''): string {
  return `version: 1
rules:
  - id: r
${trigger}
${when === '' ? '' : `    when: '${when}'\n`}    then:
${then}
        actAs: [payer]
`;
}

export const ON_HOLDING = `    on: { created: '#holdings:Holdings.Api:Holding', party: payer }`;
export const BURN = `      - exercise: { template: '#tokens:Token:Token', contractId: '\${{ event.contractId }}', choice: Burn }`;
