import { describe, expect, it } from 'vitest';
import type { ListActiveContractsRequest } from '../../src/ledger/ledger-client.js';
import type { JsGetActiveContractsResponse } from '../../src/ledger/wire/wire-types.js';
import { loadRulesOrThrow } from '../../src/rules/load-rules.js';
import { ledgerSlotSource } from '../../src/runtime/ledger-slot-source.js';
import { planSubscription } from '../../src/runtime/subscription-plan.js';
import { syntheticDar } from '../support/synthetic-dar.js';

// The filters the bot reads the ledger with, for template and interface rules: an interface rule
// is an InterfaceFilter with its view, for the updates stream and a schedule's active contracts.

const { catalogue } = syntheticDar();
const PARTIES = { owner: 'Owner::1220aa', auditor: 'Auditor::1220bb' };
const TOKEN = '#synthetic-assets:Synthetic.Assets:Token';
const ASSET = '#synthetic-api:Synthetic.Api:Asset';

function rules(text: string) {
  return loadRulesOrThrow([{ path: 'rules.yaml', text: `version: 1\nrules:\n${text}` }], {
    parties: PARTIES,
    packages: catalogue,
  });
}

const NOTE = `{ create: { template: '#synthetic-assets:Synthetic.Assets:Note', createArguments: { owner: '\${{ parties.owner }}', text: x } }, actAs: owner }`;
const ASSET_CREATED = `  - id: asset-created
    on: { created: '${ASSET}', party: owner }
    then: [${NOTE}]
`;
const TOKEN_CREATED = `  - id: token-created
    on: { created: '${TOKEN}', party: owner }
    then: [${NOTE}]
`;
const ASSET_ARCHIVED = `  - id: asset-archived
    on: { archived: '${ASSET}', party: auditor }
    then: [${NOTE}]
`;
const ASSET_EXERCISED = `  - id: asset-transferred
    on: { exercised: { interface: '${ASSET}', choice: Asset_Transfer }, party: owner }
    then: [${NOTE}]
`;

describe('planSubscription', () => {
  it('subscribes to an interface with an InterfaceFilter that includes the view', () => {
    const set = rules(ASSET_CREATED);
    expect(set.rules[0]?.trigger).toMatchObject({ kind: 'created', refKind: 'interface' });
    const plan = planSubscription(set, PARTIES);
    expect(plan.shape).toBe('TRANSACTION_SHAPE_ACS_DELTA');
    expect(plan.updateFormat?.includeTransactions?.eventFormat.filtersByParty).toEqual({
      [PARTIES.owner]: {
        cumulative: [
          {
            identifierFilter: {
              InterfaceFilter: {
                value: {
                  interfaceId: ASSET,
                  includeInterfaceView: true,
                  includeCreatedEventBlob: false,
                },
              },
            },
          },
        ],
      },
    });
  });

  it('templates and interfaces of one party share its filter; each party has its own', () => {
    const plan = planSubscription(rules(TOKEN_CREATED + ASSET_CREATED + ASSET_ARCHIVED), PARTIES);
    const byParty = plan.updateFormat?.includeTransactions?.eventFormat.filtersByParty ?? {};
    const ids = (party: string) =>
      byParty[party]?.cumulative?.map((c) => {
        const f = c.identifierFilter;
        if (f === undefined) return 'none';
        return 'TemplateFilter' in f
          ? `template ${f.TemplateFilter.value.templateId}`
          : 'InterfaceFilter' in f
            ? `interface ${f.InterfaceFilter.value.interfaceId}`
            : 'other';
      });
    expect(ids(PARTIES.owner)).toEqual([`template ${TOKEN}`, `interface ${ASSET}`]);
    expect(ids(PARTIES.auditor)).toEqual([`interface ${ASSET}`]);
    expect(plan.readParties).toEqual([PARTIES.auditor, PARTIES.owner].sort());
  });

  it('an exercised interface rule reads LEDGER_EFFECTS through the interface', () => {
    const plan = planSubscription(rules(ASSET_EXERCISED), PARTIES);
    expect(plan.shape).toBe('TRANSACTION_SHAPE_LEDGER_EFFECTS');
    const filters = plan.updateFormat?.includeTransactions?.eventFormat.filtersByParty;
    expect(JSON.stringify(filters)).toContain(
      `"InterfaceFilter":{"value":{"interfaceId":"${ASSET}"`,
    );
  });

  it('without packages an interface reference is taken as a template', () => {
    const set = loadRulesOrThrow(
      [{ path: 'rules.yaml', text: `version: 1\nrules:\n${ASSET_CREATED}` }],
      { parties: PARTIES },
    );
    const plan = planSubscription(set, PARTIES);
    expect(JSON.stringify(plan.updateFormat)).toContain(
      `"TemplateFilter":{"value":{"templateId":"${ASSET}"`,
    );
  });
});

describe('ledgerSlotSource', () => {
  /** A ledger that records the active-contract requests and answers none. */
  function recordingLedger() {
    const requests: ListActiveContractsRequest[] = [];
    return {
      requests,
      ledgerEnd: () => Promise.resolve(7),
      // eslint-disable-next-line require-yield
      async *activeContracts(request: ListActiveContractsRequest) {
        requests.push(request);
        return await Promise.resolve<JsGetActiveContractsResponse | undefined>(undefined);
      },
    };
  }

  it('reads a forEach over an interface with an InterfaceFilter (views included)', async () => {
    const set = rules(`  - id: sweep
    schedule: { cron: '@daily' }
    forEach: { activeContracts: '${ASSET}', party: owner }
    then: [${NOTE}]
`);
    const trigger = set.rules[0]!.trigger;
    if (trigger.kind !== 'schedule' || trigger.forEach === null) throw new Error('no forEach');
    expect(trigger.forEach.refKind).toBe('interface');
    const ledger = recordingLedger();
    const source = ledgerSlotSource(ledger);
    const query = {
      offset: 7,
      party: PARTIES.owner,
      template: trigger.forEach.template,
      refKind: trigger.forEach.refKind,
    };
    for await (const _ of source.activeContracts(query)) throw new Error('no contract expected');
    expect(ledger.requests).toEqual([
      {
        activeAtOffset: 7,
        eventFormat: {
          filtersByParty: {
            [PARTIES.owner]: {
              cumulative: [
                {
                  identifierFilter: {
                    InterfaceFilter: {
                      value: {
                        interfaceId: ASSET,
                        includeInterfaceView: true,
                        includeCreatedEventBlob: false,
                      },
                    },
                  },
                },
              ],
            },
          },
          verbose: true,
        },
      },
    ]);
    for await (const _ of source.activeContracts({ ...query, refKind: 'template' })) break;
    expect(JSON.stringify(ledger.requests[1])).toContain('"TemplateFilter"');
  });
});
