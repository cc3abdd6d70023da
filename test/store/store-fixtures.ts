import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewIntent } from '../../src/store/store.js';

/** A fresh temp directory; `cleanup()` removes it. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerbot-store-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

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
