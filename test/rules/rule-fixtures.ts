import { loadRules } from '../../src/rules/load-rules.js';
import type { RuleSet } from '../../src/rules/compiled-rule.js';
import type { EventInput, TransactionInfo } from '../../src/rules/evaluate.js';
import type {
  ArchivedEvent,
  CreatedEvent,
  ExercisedEvent,
} from '../../src/ledger/wire/wire-types.js';
import { specValidator } from '../support/spec-validator.js';

export const PARTIES = {
  payer: 'Payer::1220aaaa',
  issuer: 'Issuer::1220bbbb',
  auditor: 'Auditor::1220cccc',
} as const;

export const PKG_V1 = 'a'.repeat(64);
export const PKG_V2 = 'b'.repeat(64);

/** Loads rule file text; fails the test when the text has errors. */
export function rules(text: string, file = 'rules.yaml'): RuleSet {
  const { ruleSet, problems } = loadRules([{ path: file, text }], { parties: PARTIES });
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`fixture rules have errors: ${JSON.stringify(errors, null, 1)}`);
  }
  return ruleSet;
}

export function tx(overrides: Partial<TransactionInfo> = {}): TransactionInfo {
  return {
    updateId: '1220' + 'f'.repeat(60),
    offset: 42,
    recordTime: '2025-03-03T08:00:00.123456Z',
    effectiveAt: '2025-03-03T08:00:00.123456Z',
    workflowId: '',
    ...overrides,
  };
}

export function created(overrides: Partial<CreatedEvent> = {}): CreatedEvent {
  const event: CreatedEvent = {
    offset: 42,
    nodeId: 0,
    contractId: '00' + 'c'.repeat(64),
    templateId: `${PKG_V1}:Invoice:Invoice`,
    contractKey: null,
    createArgument: {
      issuer: PARTIES.issuer,
      payer: PARTIES.payer,
      amount: '999.99',
      currency: 'USD',
      due: '2025-03-01',
      reference: 'INV-1',
    },
    createdEventBlob: '',
    interfaceViews: [],
    witnessParties: [PARTIES.payer],
    signatories: [PARTIES.issuer],
    observers: [PARTIES.payer],
    createdAt: '2025-03-03T08:00:00.123456Z',
    packageName: 'invoices',
    representativePackageId: PKG_V1,
    acsDelta: true,
    ...overrides,
  };
  specValidator('openapi-3.5').assert('CreatedEvent', event);
  return event;
}

export function exercised(overrides: Partial<ExercisedEvent> = {}): ExercisedEvent {
  const event: ExercisedEvent = {
    offset: 43,
    nodeId: 2,
    contractId: '00' + 'c'.repeat(64),
    templateId: `${PKG_V1}:Invoice:Invoice`,
    choice: 'Remind',
    choiceArgument: { note: null },
    actingParties: [PARTIES.issuer],
    consuming: false,
    witnessParties: [PARTIES.issuer, PARTIES.payer],
    lastDescendantNodeId: 2,
    exerciseResult: 'Please pay INV-1',
    packageName: 'invoices',
    implementedInterfaces: [],
    acsDelta: false,
    ...overrides,
  };
  specValidator('openapi-3.5').assert('ExercisedEvent', event);
  return event;
}

export function archived(overrides: Partial<ArchivedEvent> = {}): ArchivedEvent {
  const event: ArchivedEvent = {
    offset: 44,
    nodeId: 3,
    contractId: '00' + 'c'.repeat(64),
    templateId: `${PKG_V1}:Invoice:Invoice`,
    witnessParties: [PARTIES.payer],
    packageName: 'invoices',
    implementedInterfaces: [],
    ...overrides,
  };
  specValidator('openapi-3.5').assert('ArchivedEvent', event);
  return event;
}

export function input(
  event:
    | { CreatedEvent: CreatedEvent }
    | { ExercisedEvent: ExercisedEvent }
    | { ArchivedEvent: ArchivedEvent },
  transaction: Partial<TransactionInfo> = {},
): EventInput {
  return { transaction: tx(transaction), event };
}

export const CONTEXT = { parties: PARTIES, now: new Date('2025-03-03T09:30:00Z') };
