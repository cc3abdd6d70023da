import { describe, expect, it } from 'vitest';
import type { JsTransaction } from '../../src/ledger/wire/wire-types.js';
import { commandIdFor } from '../../src/rules/command-id.js';
import type { Intent } from '../../src/rules/evaluation-result.js';
import { indexRules } from '../../src/rules/rule-index.js';
import { BotMetrics } from '../../src/runtime/bot-metrics.js';
import { evaluateUpdate } from '../../src/runtime/evaluate-update.js';
import {
  pruneRecoveryPlan,
  rekeyRecovered,
  type RecoveryCounts,
} from '../../src/runtime/prune-recovery.js';
import { ACCEPT_RULES, invoiceCreated, PARTIES, PAYER, rules } from './bot-fixture.js';

function liveIntents(offset: number): { tx: JsTransaction; intents: readonly Intent[] } {
  const element = invoiceCreated(offset);
  if (element.kind !== 'transaction') throw new Error('not a transaction');
  const e = evaluateUpdate(element.transaction, offset, {
    index: indexRules(rules()),
    parties: PARTIES,
    now: 0,
    metrics: new BotMetrics(),
    live: false,
  });
  return { tx: element.transaction, intents: e.intents };
}

describe('rekeyRecovered', () => {
  it('keys a recovered creation by its contract id, justified at the pruning offset', () => {
    const { tx, intents } = liveIntents(10);
    const counts: RecoveryCounts = { at: 30, contracts: 1, intents: 0, known: 0 };
    const out = rekeyRecovered(intents, tx, counts, () => false);
    const triggerKey = { kind: 'contract', contractId: '00inv10', nodeId: 0 } as const;
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ triggerKey, offset: 30 });
    expect(out[0]!.commandId).toBe(
      commandIdFor({ ruleId: 'accept', revision: 1, actAs: [PAYER], triggerKey, actionIndex: 0 }),
    );
    expect(out[0]!.commandId).not.toBe(intents[0]!.commandId);
  });

  it('leaves out a creation the journal has under its live key, and counts it known', () => {
    const { tx, intents } = liveIntents(25);
    const counts: RecoveryCounts = { at: 30, contracts: 1, intents: 0, known: 0 };
    const asked: unknown[] = [];
    const out = rekeyRecovered(intents, tx, counts, (...args) => {
      asked.push(args);
      return true;
    });
    expect(out).toEqual([]);
    expect(counts.known).toBe(1);
    expect(asked).toEqual([['accept', 25, 0]]);
  });
});

describe('pruning', () => {
  it('the recovery plan reads the created rules and names the lost ones', () => {
    const plan = pruneRecoveryPlan(
      rules(`${ACCEPT_RULES}  - id: note-archive
    on: { archived: '#invoices:Invoice:Invoice', party: payer }
    then:
      - create: { template: '#invoices:Invoice:Note', createArguments: { owner: '\${{ parties.payer }}' } }
        actAs: [payer]
`),
      PARTIES,
    );
    expect(Object.keys(plan.eventFormat?.filtersByParty ?? {})).toEqual([PAYER]);
    expect(plan.lostRules).toEqual(['note-archive']);
  });
});
