import { describe, expect, it } from 'vitest';
import { newIntentRow, toIntent } from '../../src/store/sqlite-rows.js';
import type { TriggerKey } from '../../src/store/store.js';
import { eventIntent } from './store-fixtures.js';

function roundTrip(trigger: TriggerKey): TriggerKey {
  return toIntent(newIntentRow(eventIntent(3, 0, { trigger }), 0)).trigger;
}

describe('intent rows', () => {
  it('stores each kind of trigger in the trigger columns and reads it back', () => {
    const event: TriggerKey = { kind: 'event', updateId: 'u', nodeId: 4 };
    const slot: TriggerKey = { kind: 'slot', slot: 1_700_000_000_000, contractId: 'c1' };
    const contract: TriggerKey = { kind: 'contract', contractId: 'c2', nodeId: 2 };
    expect(roundTrip(event)).toEqual(event);
    expect(roundTrip(slot)).toEqual(slot);
    expect(roundTrip(contract)).toEqual(contract);
    expect(newIntentRow(eventIntent(3, 0, { trigger: contract }), 0)).toMatchObject({
      trigger_kind: 'event',
      trigger_update_id: null,
      trigger_contract_id: 'c2',
    });
  });

  it('stores a slot without forEach as the journal always has (an empty contract id)', () => {
    const slot: TriggerKey = { kind: 'slot', slot: 1_700_000_000_000, contractId: null };
    expect(newIntentRow(eventIntent(3, 0, { trigger: slot }), 0)).toMatchObject({
      trigger_kind: 'slot',
      trigger_slot: 1_700_000_000_000,
      trigger_contract_id: '',
    });
    expect(roundTrip(slot)).toEqual(slot);
    const row = newIntentRow(eventIntent(3, 0, { trigger: slot }), 0);
    expect(toIntent({ ...row, trigger_contract_id: null }).trigger).toEqual(slot);
  });

  it('makes a pending row due now unless told otherwise, with actAs sorted', () => {
    const row = newIntentRow(eventIntent(3), 50);
    expect(row).toMatchObject({ state: 'pending', attempts: 0, next_attempt_at: 50 });
    expect(JSON.parse(row.act_as)).toEqual(['Issuer::1220aa', 'Payer::1220bb']);
    expect(newIntentRow(eventIntent(3, 0, { nextAttemptAt: 80 }), 50).next_attempt_at).toBe(80);
  });

  it('reads a row without the in_doubt column (schema 1) as in doubt once it had an attempt', () => {
    const { in_doubt: _, ...row } = { ...newIntentRow(eventIntent(3), 0), in_doubt: 0 };
    expect(toIntent(row).inDoubt).toBeUndefined();
    expect(toIntent({ ...row, attempts: 1 }).inDoubt).toBe(true);
    expect(toIntent({ ...row, attempts: 1, in_doubt: 0 }).inDoubt).toBeUndefined();
  });
});
