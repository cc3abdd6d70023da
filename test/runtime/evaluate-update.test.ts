import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import type { JsTransaction } from '../../src/ledger/wire/wire-types.js';
import { indexRules } from '../../src/rules/rule-index.js';
import { BotMetrics } from '../../src/runtime/bot-metrics.js';
import { evaluateUpdate } from '../../src/runtime/evaluate-update.js';
import { journalEntriesOf, slotIntentOf } from '../../src/runtime/journal-entry.js';
import type { PackageArchive } from '../../src/daml-lf/read-dalf.js';
import { loadRulesOrThrow } from '../../src/rules/load-rules.js';
import { syntheticDar } from '../support/synthetic-dar.js';
import { FAILING_ACCEPT_RULES, invoiceCreated, PARTIES, PAYER, rules } from './bot-fixture.js';

function tx(offset: number, args: Record<string, unknown> = {}): JsTransaction {
  const element = invoiceCreated(offset, args);
  if (element.kind !== 'transaction') throw new Error('not a transaction');
  return element.transaction;
}

const clock = new FakeClock(Date.UTC(2026, 0, 5, 9));

describe('evaluateUpdate', () => {
  it('evaluates one transaction into intents and counts a live one', () => {
    const metrics = new BotMetrics();
    const e = evaluateUpdate(tx(11), 11, {
      index: indexRules(rules()),
      parties: PARTIES,
      now: clock.now(),
      metrics,
      live: true,
    });
    expect(e.intents.map((i) => [i.ruleId, i.offset])).toEqual([['accept', 11]]);
    expect(e.matched).toBe(1);
    expect(e.recordMs).toBe(Date.parse('2026-01-05T08:59:00Z'));
    expect(metrics.snapshot()).toMatchObject({ transactionsSeen: 1, eventsSeen: 1 });
    // The lag: the bot's time minus the record time.
    expect(metrics.streamLagMs).toBe(60_000);
  });

  it('counts nothing live for a replay, but counts matches and rule errors', () => {
    const metrics = new BotMetrics();
    const failing = rules(FAILING_ACCEPT_RULES);
    const e = evaluateUpdate(tx(3), 3, {
      index: indexRules(failing),
      parties: PARTIES,
      now: clock.now(),
      metrics,
      live: false,
    });
    expect(e.intents).toEqual([]);
    expect(e.errors.map((x) => [x.ruleId, x.code])).toEqual([['accept', 'CEL_EVALUATION_ERROR']]);
    expect(metrics.snapshot()).toMatchObject({ transactionsSeen: 0, ruleErrors: 1 });
    expect(metrics.streamLagMs).toBeNull();
  });

  it('CEL `now` is the record time (the same on every replay), the bot time only when unreadable', () => {
    const text = `version: 1
rules:
  - id: accept
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    when: now < timestamp("2026-01-05T09:00:00Z")
    then:
      - exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Accept }
        actAs: [payer]
`;
    const context = {
      index: indexRules(rules(text)),
      parties: PARTIES,
      now: Date.UTC(2026, 0, 6),
      metrics: new BotMetrics(),
      live: false,
    };
    expect(evaluateUpdate(tx(1), 1, context).intents).toHaveLength(1);
    const unreadable = { ...tx(2), recordTime: 'not a time' };
    expect(evaluateUpdate(unreadable, 2, context).intents).toHaveLength(0);
  });

  it('lets the caller rekey the intents (a pruning recovery)', () => {
    const e = evaluateUpdate(tx(4), 4, {
      index: indexRules(rules()),
      parties: PARTIES,
      now: clock.now(),
      metrics: new BotMetrics(),
      live: false,
      rekey: (intents) => intents.map((i) => ({ ...i, commandId: 'lb-rekeyed', offset: 30 })),
    });
    expect(e.intents.map((i) => [i.commandId, i.offset])).toEqual([['lb-rekeyed', 30]]);
  });
});

describe('journal entries', () => {
  it('of an event: the trigger, the payload, the triggering event and the deadline', () => {
    const t = tx(11);
    const e = evaluateUpdate(t, 11, {
      index: indexRules(rules()),
      parties: PARTIES,
      now: clock.now(),
      metrics: new BotMetrics(),
      live: false,
    });
    const [entry] = journalEntriesOf(e, clock.now(), 'ledgerbot');
    expect(entry).toMatchObject({
      commandId: e.intents[0]!.commandId,
      userId: 'ledgerbot',
      actAs: [PAYER],
      ruleId: 'accept',
      trigger: { kind: 'event', updateId: 'upd-11', nodeId: 0 },
      offset: 11,
      payload: { version: 1, workflowId: 'accept', concurrency: 8 },
      event: { updateId: 'upd-11', offset: 11, event: t.events[0] },
      deadline: clock.now() + 3_600_000,
      nextAttemptAt: clock.now(),
    });
  });

  it('of a slot: the slot trigger, and the slot and snapshot as its event', () => {
    const [intent] = evaluateUpdate(tx(5), 5, {
      index: indexRules(rules()),
      parties: PARTIES,
      now: clock.now(),
      metrics: new BotMetrics(),
      live: false,
    }).intents;
    const slot = Date.UTC(2026, 0, 5, 9);
    const entry = slotIntentOf(
      {
        ...intent!,
        triggerKey: { kind: 'slot', slot, contractId: null },
      },
      { ruleId: 'accept', slot, snapshotOffset: 40 },
      clock.now(),
      'ledgerbot',
    );
    expect(entry.trigger).toEqual({ kind: 'slot', slot, contractId: null });
    expect(entry.event).toEqual({ slot: '2026-01-05T09:00:00.000Z', snapshotOffset: 40 });
  });
});

describe('evaluateUpdate with interface rules', () => {
  const dar = syntheticDar();
  const [api, assets] = dar.packages as [PackageArchive, PackageArchive];
  const OWNER = 'Owner::1220aa';
  const interfaceRules = loadRulesOrThrow(
    [
      {
        path: 'rules.yaml',
        text: `version: 1
rules:
  - id: big-assets
    on: { created: '#synthetic-api:Synthetic.Api:Asset', party: owner }
    when: decimal(event.view.amount) > decimal("10")
    then:
      - exercise: { interface: '#synthetic-api:Synthetic.Api:Asset', contractId: '\${{ event.contractId }}', choice: Asset_Describe }
        actAs: [owner]
`,
      },
    ],
    { parties: { owner: OWNER }, packages: dar.catalogue },
  );

  /** A Token created, seen through the Asset interface of package `interfacePackage`. */
  function tokenCreated(interfacePackage: string, amount: string): JsTransaction {
    return {
      updateId: 'upd-1',
      commandId: '',
      workflowId: '',
      effectiveAt: '2026-01-05T08:59:00Z',
      offset: 1,
      synchronizerId: 'sync::1220ef',
      recordTime: '2026-01-05T08:59:00Z',
      events: [
        {
          CreatedEvent: {
            offset: 1,
            nodeId: 0,
            contractId: '00tok1',
            templateId: `${assets.packageId}:Synthetic.Assets:Token`,
            createArgument: { owner: OWNER, amount },
            interfaceViews: [
              {
                interfaceId: `${interfacePackage}:Synthetic.Api:Asset`,
                viewStatus: { code: 0, message: '' },
                viewValue: { owner: OWNER, amount, label: null },
              },
            ],
            witnessParties: [OWNER],
            signatories: [OWNER],
            observers: [],
            createdAt: '2026-01-05T08:59:00Z',
            packageName: 'synthetic-assets',
            representativePackageId: assets.packageId,
            acsDelta: true,
          },
        },
      ],
    };
  }

  const evaluateWith = (t: JsTransaction, packageNameOf?: (id: string) => string | undefined) =>
    evaluateUpdate(t, 1, {
      index: indexRules(interfaceRules),
      parties: { owner: OWNER },
      now: clock.now(),
      metrics: new BotMetrics(),
      live: false,
      ...(packageNameOf === undefined ? {} : { packageNameOf }),
    });

  it('matches the view of the interface the rule names, by the package name the catalogue gives', () => {
    const names = (id: string) => dar.catalogue.packageNameOf(id);
    const fired = evaluateWith(tokenCreated(api.packageId, '25.0'), names);
    expect(fired.errors).toEqual([]);
    expect(fired.intents.map((i) => i.ruleId)).toEqual(['big-assets']);
    // event.view is the interface view: a small amount does not fire.
    expect(evaluateWith(tokenCreated(api.packageId, '5.0'), names).intents).toEqual([]);
    // An interface of the same Module:Entity in another package is not the rule's.
    const other = 'f'.repeat(64);
    const foreign = evaluateWith(tokenCreated(other, '25.0'), (id) =>
      id === other ? 'someone-elses-api' : names(id),
    );
    expect(foreign.matched).toBe(0);
    expect(foreign.intents).toEqual([]);
  });

  it('without packageNameOf an interface matches by Module:Entity alone', () => {
    const other = 'f'.repeat(64);
    expect(evaluateWith(tokenCreated(other, '25.0')).intents.map((i) => i.ruleId)).toEqual([
      'big-assets',
    ]);
  });
});
