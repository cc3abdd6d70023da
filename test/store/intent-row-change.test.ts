import { describe, expect, it } from 'vitest';
import { IllegalStateError } from '../../src/core/illegal-state-error.js';
import { changedIntentRow } from '../../src/store/intent-row-change.js';
import { newIntentRow, type IntentRow } from '../../src/store/sqlite-rows.js';
import { StoreError } from '../../src/store/store-error.js';
import { eventIntent } from './store-fixtures.js';

function row(overrides: Partial<IntentRow> = {}): IntentRow {
  return { ...newIntentRow(eventIntent(1), 100), in_doubt: 0, ...overrides };
}

describe('changedIntentRow', () => {
  it('counts an attempt and clears the due time on submitted', () => {
    const next = changedIntentRow(row(), { to: 'submitted', submissionId: 's1' }, 200);
    expect(next).toMatchObject({
      state: 'submitted',
      attempts: 1,
      submission_id: 's1',
      next_attempt_at: null,
      updated_at: 200,
      in_doubt: 0,
    });
  });

  it('marks in doubt a retry without a definite answer, not one with', () => {
    const sent = row({ state: 'submitted', attempts: 1 });
    expect(changedIntentRow(sent, { to: 'pending', nextAttemptAt: 5 }, 1).in_doubt).toBe(1);
    expect(
      changedIntentRow(sent, { to: 'pending', nextAttemptAt: 5, definite: true }, 1).in_doubt,
    ).toBe(0);
    expect(changedIntentRow(sent, { to: 'submitted', submissionId: 's2' }, 1).in_doubt).toBe(1);
  });

  it('keeps an intent in doubt once it is, and counts an old-schema row with attempts as in doubt', () => {
    const doubtful = row({ state: 'submitted', attempts: 1, in_doubt: 1 });
    const done = changedIntentRow(doubtful, { to: 'pending', nextAttemptAt: 5, definite: true }, 1);
    expect(done.in_doubt).toBe(1);
    const { in_doubt: _, ...old } = row({ state: 'submitted', attempts: 2 });
    expect(changedIntentRow(old, { to: 'succeeded' }, 1).in_doubt).toBe(1);
  });

  it('records completions, rejections and dead letters with their facts', () => {
    const sent = row({ state: 'submitted', attempts: 1, next_attempt_at: 9 });
    expect(
      changedIntentRow(sent, { to: 'duplicate', completionOffset: 7, updateId: 'u' }, 1),
    ).toMatchObject({ completion_offset: 7, completion_update_id: 'u', next_attempt_at: null });
    expect(
      changedIntentRow(sent, { to: 'rejected', error: { code: 'E' }, completionOffset: 8 }, 1),
    ).toMatchObject({ last_error: '{"code":"E"}', completion_offset: 8 });
    expect(changedIntentRow(sent, { to: 'dead-lettered', error: 'x' }, 1)).toMatchObject({
      state: 'dead-lettered',
      last_error: '"x"',
      next_attempt_at: null,
    });
  });

  it('refuses a move out of a final state, naming it', () => {
    expect(() =>
      changedIntentRow(row({ state: 'succeeded' }), { to: 'pending', nextAttemptAt: 0 }, 1),
    ).toThrow(IllegalStateError);
    expect(() => changedIntentRow(row({ state: 'rejected' }), { to: 'succeeded' }, 1)).toThrow(
      /rejected is final/,
    );
  });

  it('refuses an error that is not JSON', () => {
    expect(() => changedIntentRow(row(), { to: 'rejected', error: { n: 1n } }, 1)).toThrow(
      StoreError,
    );
  });
});
