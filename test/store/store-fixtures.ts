import type { NewIntent } from '../../src/store/store.js';

/** An event-triggered intent at `offset`; `n` tells intents of one event apart. */
export function eventIntent(offset: number, n = 0, overrides: Partial<NewIntent> = {}): NewIntent {
  return {
    commandId: `lb-rule-${offset}-${n}`,
    userId: 'ledgerbot',
    actAs: ['Payer::1220bb', 'Issuer::1220aa'],
    ruleId: 'rule',
    revision: 1,
    actionIndex: n,
    trigger: { kind: 'event', updateId: `upd-${offset}`, nodeId: n },
    offset,
    payload: {
      commands: [
        { ExerciseCommand: { templateId: '#invoices:Invoice:Invoice', choice: 'Accept' } },
      ],
      commandId: `lb-rule-${offset}-${n}`,
    },
    ...overrides,
  };
}
