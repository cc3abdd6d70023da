import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import {
  decodedJournal,
  decodeSubmissionPayload,
  SubmissionPayloadError,
  type SubmissionPayload,
  type SubmissionPayloadErrorCode,
} from '../../src/runtime/submission-payload.js';
import { openSqliteStore, SQLITE_STORE_FILE } from '../../src/store/open-sqlite-store.js';
import { tempDir } from '../support/temp-dir.js';
import { newIntent, payload } from './tracker-fixture.js';

/**
 * A payload exactly as the journal of ledgerbot 0.x holds it (the text of a `payload` column,
 * written by `payloadOf` since the journal's first version). Kept as text on purpose: if the
 * format changes, this test says that existing state directories would no longer read.
 */
const STORED_V1 =
  '{"version":1,"commands":[{"ExerciseCommand":{"templateId":"#invoices:Invoice:Invoice",' +
  '"contractId":"00abc","choice":"Accept","choiceArgument":{}}}],"actAs":["payer::1220abcd"],' +
  '"readAs":[],"workflowId":"accept-small-invoices","disclosedContracts":[],' +
  '"retry":{"maxAttempts":5,"initialDelayMs":1000,"maxDelayMs":60000,"deadlineMs":600000},' +
  '"rateLimit":{"perSecond":10,"burst":20},"concurrency":4}';

function decodeWith(change: Record<string, unknown>): SubmissionPayload | SubmissionPayloadError {
  return decodeSubmissionPayload({ ...payload(), ...change });
}

describe('decodeSubmissionPayload', () => {
  it('returns a valid payload as it is', () => {
    const p = payload();
    expect(decodeSubmissionPayload(p)).toBe(p);
  });

  it('reads a payload as the journal has stored it since version 1', () => {
    const decoded = decodeSubmissionPayload(JSON.parse(STORED_V1));
    expect(decoded).not.toBeInstanceOf(SubmissionPayloadError);
    const p = decoded as SubmissionPayload;
    expect(p.retry.deadlineMs).toBe(600_000);
    expect(p.concurrency).toBe(4);
    expect(p.commands).toHaveLength(1);
  });

  it.each([null, 'text', 42, [payload()]])('refuses %j: PAYLOAD_NOT_OBJECT', (value) => {
    expect(decodeSubmissionPayload(value)).toMatchObject({ code: 'PAYLOAD_NOT_OBJECT' });
  });

  const malformed: [string, Record<string, unknown>, SubmissionPayloadErrorCode][] = [
    ['version 2', { version: 2 }, 'PAYLOAD_UNKNOWN_VERSION'],
    ['no version', { version: undefined }, 'PAYLOAD_UNKNOWN_VERSION'],
    ['commands not a list', { commands: {} }, 'PAYLOAD_BAD_COMMANDS'],
    ['a command that is not an object', { commands: ['create'] }, 'PAYLOAD_BAD_COMMANDS'],
    ['actAs not a list', { actAs: 'payer' }, 'PAYLOAD_BAD_ACT_AS'],
    ['an actAs party that is not text', { actAs: [1] }, 'PAYLOAD_BAD_ACT_AS'],
    ['no readAs', { readAs: undefined }, 'PAYLOAD_BAD_READ_AS'],
    ['workflowId not text', { workflowId: 7 }, 'PAYLOAD_BAD_WORKFLOW_ID'],
    [
      'disclosedContracts not a list',
      { disclosedContracts: null },
      'PAYLOAD_BAD_DISCLOSED_CONTRACTS',
    ],
    ['no retry', { retry: undefined }, 'PAYLOAD_BAD_RETRY'],
    [
      'a retry deadline that is not a number',
      { retry: { ...payload().retry, deadlineMs: '10m' } },
      'PAYLOAD_BAD_RETRY',
    ],
    ['zero attempts', { retry: { ...payload().retry, maxAttempts: 0 } }, 'PAYLOAD_BAD_RETRY'],
    ['no rateLimit', { rateLimit: undefined }, 'PAYLOAD_BAD_RATE_LIMIT'],
    ['a rate of 0', { rateLimit: { perSecond: 0, burst: 1 } }, 'PAYLOAD_BAD_RATE_LIMIT'],
    ['no concurrency', { concurrency: undefined }, 'PAYLOAD_BAD_CONCURRENCY'],
    ['a concurrency of 0', { concurrency: 0 }, 'PAYLOAD_BAD_CONCURRENCY'],
    ['a fractional concurrency', { concurrency: 1.5 }, 'PAYLOAD_BAD_CONCURRENCY'],
  ];
  it.each(malformed)('refuses %s: %s', (_, change, code) => {
    const decoded = decodeWith(change);
    expect(decoded).toBeInstanceOf(SubmissionPayloadError);
    expect(decoded).toMatchObject({ code, name: 'SubmissionPayloadError' });
  });

  it('keeps the stored value on the error, and prints it as JSON', () => {
    const stored = { ...payload(), version: 2 };
    const err = decodeSubmissionPayload(stored) as SubmissionPayloadError;
    expect(err.stored).toBe(stored);
    expect(JSON.parse(JSON.stringify({ payload: err }))).toEqual({ payload: stored });
  });
});

describe('decodedJournal', () => {
  it('hands out each row typed: an existing journal row reads, a broken one is a typed error', () => {
    const { dir, cleanup } = tempDir();
    try {
      const written = openSqliteStore({ dir, clock: new FakeClock() });
      written.recordIntents([newIntent(1), newIntent(2), newIntent(3)]);
      written.close();
      // As an earlier version left them: one row with the stored text, one broken by hand.
      const db = new Database(join(dir, SQLITE_STORE_FILE));
      const set = db.prepare('UPDATE intents SET payload = ? WHERE command_id = ?');
      set.run(STORED_V1, 'lb-accept-1');
      set.run('{"version":1,"commands":"none"}', 'lb-accept-2');
      db.close();

      const reopened = decodedJournal(openSqliteStore({ dir, clock: new FakeClock() }));
      const [old, broken, fresh] = reopened.openIntents();
      expect(old!.payload).not.toBeInstanceOf(SubmissionPayloadError);
      expect((old!.payload as SubmissionPayload).retry.deadlineMs).toBe(600_000);
      expect(broken!.payload).toBeInstanceOf(SubmissionPayloadError);
      expect(broken!.payload).toMatchObject({ code: 'PAYLOAD_BAD_COMMANDS' });
      expect(fresh!.payload).toEqual(payload());
      // Decoding an already decoded journal changes nothing.
      expect(decodedJournal(reopened).getIntent('lb-accept-2')!.payload).toMatchObject({
        code: 'PAYLOAD_BAD_COMMANDS',
        stored: { version: 1, commands: 'none' },
      });
      reopened.close();
    } finally {
      cleanup();
    }
  });
});
