import { describe, expect, it } from 'vitest';
import {
  deadLetterView,
  intentView,
  recentIntentView,
  slotIntentView,
  triggerView,
} from '../../src/runtime/intent-view.js';
import type { DeadLetter, IntentRecord } from '../../src/store/store.js';

const T0 = Date.parse('2026-01-01T12:00:00.000Z');

const intent = (over: Partial<IntentRecord> = {}): IntentRecord => ({
  commandId: 'lb-settle-1',
  userId: 'bot',
  actAs: ['issuer::1220'],
  ruleId: 'settle',
  revision: 2,
  actionIndex: 0,
  trigger: { kind: 'event', updateId: 'u1', nodeId: 3 },
  offset: 118,
  payload: { commands: [] },
  state: 'dead-lettered',
  attempts: 10,
  createdAt: T0,
  updatedAt: T0 + 1000,
  ...over,
});

describe('intent view (the ops API shapes of docs/operations-api.md)', () => {
  it('shows a slot trigger with an ISO time and only the key fields of the others', () => {
    expect(triggerView({ kind: 'slot', slot: T0, contractId: 'c1' })).toEqual({
      kind: 'slot',
      slot: '2026-01-01T12:00:00.000Z',
      contractId: 'c1',
    });
    const extra = { kind: 'event', updateId: 'u1', nodeId: 0, stray: 1 } as const;
    expect(triggerView(extra)).toEqual({ kind: 'event', updateId: 'u1', nodeId: 0 });
    expect(triggerView({ kind: 'contract', contractId: 'c2', nodeId: 4 })).toEqual({
      kind: 'contract',
      contractId: 'c2',
      nodeId: 4,
    });
  });

  it('shows a dead letter as the summary, with payload and event only when full', () => {
    const d: DeadLetter = {
      intent: intent(),
      error: { code: 'X', message: 'm', reason: 'max-attempts' },
      event: { created: true },
      deadLetteredAt: T0 + 5000,
    };
    const summary = {
      commandId: 'lb-settle-1',
      ruleId: 'settle',
      revision: 2,
      actAs: ['issuer::1220'],
      offset: 118,
      trigger: { kind: 'event', updateId: 'u1', nodeId: 3 },
      attempts: 10,
      error: { code: 'X', message: 'm', reason: 'max-attempts' },
      deadLetteredAt: '2026-01-01T12:00:05.000Z',
    };
    expect(deadLetterView(d)).toStrictEqual(summary);
    expect(deadLetterView(d, true)).toStrictEqual({
      ...summary,
      payload: { commands: [] },
      event: { created: true },
    });
  });

  it('always has the error key (null when there is none), as the API does', () => {
    const d: DeadLetter = { intent: intent(), error: undefined, deadLetteredAt: T0 };
    expect(JSON.parse(JSON.stringify(deadLetterView(d, true)))).toMatchObject({ error: null });
    expect(deadLetterView(d, true)).not.toHaveProperty('event');
  });

  it('shows an intent with its last error only when it has one', () => {
    expect(intentView(intent({ state: 'pending', lastError: undefined }))).toStrictEqual({
      commandId: 'lb-settle-1',
      ruleId: 'settle',
      state: 'pending',
      attempts: 10,
      offset: 118,
      updatedAt: '2026-01-01T12:00:01.000Z',
    });
    expect(intentView(intent({ lastError: { code: 'E' } }))).toMatchObject({
      error: { code: 'E' },
    });
    // Committed after a retry (a dead letter retried, say): no error; its attempts show them.
    for (const state of ['succeeded', 'duplicate'] as const) {
      expect(
        intentView(intent({ state, lastError: { code: 'SEQUENCER_BACKPRESSURE' } })),
      ).not.toHaveProperty('error');
    }
  });

  it('shows a slot intent with the contract it iterated over, or null', () => {
    const base = {
      commandId: 'lb-sweep-1',
      command: { CreateCommand: { templateId: 'p:M:T', createArguments: {} } },
      actAs: ['bank::1220'],
      offset: 7,
    };
    const slotKey = { kind: 'slot', slot: T0, contractId: 'c9' } as const;
    expect(slotIntentView({ ...base, triggerKey: slotKey })).toStrictEqual({
      ...base,
      contractId: 'c9',
    });
    expect(
      slotIntentView({ ...base, triggerKey: { kind: 'event', updateId: 'u', nodeId: 0 } }),
    ).toStrictEqual({ ...base, contractId: null });
  });

  it("shows a recent intent in the same shape as a journal record's", () => {
    const summary = {
      commandId: 'lb-settle-1',
      ruleId: 'settle',
      state: 'rejected',
      attempts: 2,
      offset: 118,
      updatedAt: T0 + 1000,
    } as const;
    expect(recentIntentView(summary)).toStrictEqual(
      intentView(intent({ state: 'rejected', attempts: 2, lastError: undefined })),
    );
    expect(recentIntentView({ ...summary, error: { code: 'E', message: 'm' } })).toMatchObject({
      error: { code: 'E', message: 'm' },
    });
  });
});
