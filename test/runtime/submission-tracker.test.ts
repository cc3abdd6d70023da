import { afterEach, describe, expect, it } from 'vitest';
import type { JsCommands } from '../../src/ledger/wire/wire-types.js';
import type { SubmissionPayload } from '../../src/runtime/submission-payload.js';
import { LeaseBook } from '../../src/store/pg/lease-book.js';
import { apiError } from './fake-ledger.js';
import {
  completionOf,
  INVOICE_CID,
  lostResponse,
  newIntent,
  payload,
  trackerFixture,
  type TrackerFixture,
} from './tracker-fixture.js';

let f: TrackerFixture;
afterEach(() => f.cleanup());

const last = (fx: TrackerFixture): JsCommands => {
  const s = fx.ledger.submits[fx.ledger.submits.length - 1];
  if (s === undefined) throw new Error('nothing submitted');
  return s;
};

describe('SubmissionTracker', () => {
  it('submits with the deterministic commandId, a fresh submissionId and the dedup offset, then succeeds', async () => {
    f = trackerFixture();
    await f.track(newIntent(41));
    expect(f.intent('lb-accept-41').state).toBe('pending');
    await f.clock.advance(0);
    expect(f.ledger.submits).toHaveLength(1);
    const sent = last(f);
    expect(sent).toMatchObject({
      commandId: 'lb-accept-41',
      userId: 'ledgerbot',
      actAs: ['payer::1220abcd'],
      workflowId: 'accept',
      deduplicationPeriod: { DeduplicationOffset: { value: 41 } },
    });
    expect(sent.submissionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(f.intent('lb-accept-41')).toMatchObject({
      state: 'submitted',
      attempts: 1,
      submissionId: sent.submissionId,
    });
    expect(f.admission.inFlight).toBe(1);

    f.tracker.onCompletion(completionOf(sent, 50), 50);
    expect(f.intent('lb-accept-41')).toMatchObject({
      state: 'succeeded',
      completionOffset: 50,
      completionUpdateId: 'tx-50',
    });
    expect(f.admission.inFlight).toBe(0);
    expect(f.events.map((e) => e.to)).toEqual(['submitted', 'succeeded']);
    // No timer left behind: no resubmission later.
    await f.clock.advance(60_000);
    expect(f.ledger.submits).toHaveLength(1);
  });

  it('starts the first attempt in the turn that tracks the intent: one commit holds its recording and the attempt', async () => {
    // A window no test waits for: only flush() commits; the fake clock never moves here.
    f = trackerFixture({ groupCommit: { windowMs: 3_600_000 } });
    await f.track(newIntent(42));
    await new Promise((r) => setImmediate(r));
    expect(f.intent('lb-accept-42')).toMatchObject({ state: 'submitted', attempts: 1 });
    expect(f.ledger.submits).toHaveLength(0);
    f.store.flush();
    await new Promise((r) => setImmediate(r));
    expect(f.ledger.submits.map((s) => s.commandId)).toEqual(['lb-accept-42']);
  });

  it('with group commit, sends an attempt only once the journal has committed it', async () => {
    // A window no test waits for: only flush() commits.
    f = trackerFixture({ groupCommit: { windowMs: 3_600_000 } });
    await f.track(newIntent(41));
    await f.clock.advance(0);
    expect(f.intent('lb-accept-41').state).toBe('submitted');
    expect(f.ledger.submits).toHaveLength(0);
    f.store.flush();
    await f.clock.advance(0);
    expect(f.ledger.submits).toHaveLength(1);
    expect(last(f).commandId).toBe('lb-accept-41');
  });

  it("holds a journalled attempt unsent while maySubmit says no (a fleet member's lease past its time by its own clock), and sends it a completion timeout later once it says yes", async () => {
    const hold = { ruleId: 'accept', generation: 1 };
    const lease: { book?: LeaseBook } = {};
    f = trackerFixture({
      completionTimeoutMs: 5_000,
      maySubmit: (ruleId) => lease.book?.isValid({ ...hold, ruleId }) === true,
    });
    const book = new LeaseBook(f.clock, 3_000);
    lease.book = book;
    // Renewed last by a request sent 3 s ago: a member that was paused since.
    book.acquired([hold], f.clock.now() - 3_000);
    await f.track(newIntent(41));
    await f.clock.advance(0);
    expect(f.ledger.submits).toEqual([]);
    expect(f.intent('lb-accept-41')).toMatchObject({ state: 'submitted', attempts: 1 });
    await f.clock.advance(4_999);
    expect(f.ledger.submits).toEqual([]);
    // The keeper's round renewed the lease: the next attempt goes out, under a new submissionId.
    book.renewed([hold], f.clock.now());
    await f.clock.advance(1);
    expect(f.ledger.submits).toHaveLength(1);
    expect(f.intent('lb-accept-41')).toMatchObject({
      state: 'submitted',
      attempts: 2,
      submissionId: last(f).submissionId,
    });
  });

  it('treats DUPLICATE_COMMAND as success, synchronous or in the completion', async () => {
    f = trackerFixture();
    f.ledger.submitScript.push(() => {
      throw apiError(
        'DUPLICATE_COMMAND',
        10,
        6,
        'A command with the given command id has already been successfully processed',
        { completion_offset: '33' },
        409,
      );
    });
    await f.track(newIntent(10));
    await f.track(newIntent(11));
    await f.clock.advance(0);
    expect(f.intent('lb-accept-10')).toMatchObject({ state: 'duplicate', completionOffset: 33 });

    const second = f.ledger.submits[1]!;
    f.tracker.onCompletion(
      completionOf(second, 60, {
        code: 'DUPLICATE_COMMAND',
        category: 10,
        grpc: 6,
        cause: 'A command with the given command id has already been successfully processed',
        definiteAnswer: true,
      }),
      60,
    );
    expect(f.intent('lb-accept-11')).toMatchObject({ state: 'duplicate', completionOffset: 60 });
    expect(f.ledger.submits).toHaveLength(2);
  });

  it('on SUBMISSION_ALREADY_IN_FLIGHT waits for the in-flight completion instead of resubmitting', async () => {
    f = trackerFixture({ completionTimeoutMs: 5_000 });
    f.ledger.submitScript.push(() => {
      throw apiError('SUBMISSION_ALREADY_IN_FLIGHT', 2, 10, 'in flight', {}, 409);
    });
    await f.track(newIntent(5));
    await f.clock.advance(0);
    expect(f.ledger.submits).toHaveLength(1);
    await f.clock.advance(4_000);
    expect(f.ledger.submits).toHaveLength(1); // still waiting, no retry
    // The completion of the OTHER (earlier) attempt decides.
    const other = { ...last(f), submissionId: 'earlier-attempt' };
    f.tracker.onCompletion(completionOf(other, 70), 70);
    expect(f.intent('lb-accept-5').state).toBe('succeeded');
  });

  it('after SUBMISSION_ALREADY_IN_FLIGHT and no completion, resubmits at the completion timeout', async () => {
    f = trackerFixture({ completionTimeoutMs: 5_000 });
    f.ledger.submitScript.push(() => {
      throw apiError('SUBMISSION_ALREADY_IN_FLIGHT', 2, 10, 'in flight', {}, 409);
    });
    await f.track(newIntent(5));
    await f.clock.advance(0);
    await f.clock.advance(5_000);
    expect(f.ledger.submits).toHaveLength(2);
    expect(f.ledger.submits[1]!.commandId).toBe('lb-accept-5');
    expect(f.ledger.submits[1]!.submissionId).not.toBe(f.ledger.submits[0]!.submissionId);
  });

  it('backs off retryable rejections with jitter, honouring the retry delay the participant asks for', async () => {
    f = trackerFixture();
    const backpressure = (): never => {
      throw apiError('PARTICIPANT_BACKPRESSURE', 2, 10, 'overloaded', {}, 409);
    };
    f.ledger.submitScript.push(backpressure, backpressure, backpressure);
    await f.track(
      newIntent(7, {
        payload: payload({
          retry: {
            maxAttempts: 10,
            initialDelayMs: 4_000,
            maxDelayMs: 16_000,
            deadlineMs: 600_000,
          },
        }),
      }),
    );
    const t0 = f.clock.now();
    await f.clock.advance(0);
    const first = f.intent('lb-accept-7');
    expect(first.state).toBe('pending');
    expect(first.lastError).toMatchObject({ code: 'PARTICIPANT_BACKPRESSURE' });
    // Equal jitter: attempt 0 waits between half and all of 4 s.
    const d1 = first.nextAttemptAt! - t0;
    expect(d1).toBeGreaterThanOrEqual(2_000);
    expect(d1).toBeLessThanOrEqual(4_000);
    await f.clock.advance(d1 - 1);
    expect(f.ledger.submits).toHaveLength(1);
    await f.clock.advance(1);
    expect(f.ledger.submits).toHaveLength(2);
    const second = f.intent('lb-accept-7');
    const d2 = second.nextAttemptAt! - f.clock.now();
    expect(d2).toBeGreaterThanOrEqual(4_000);
    expect(d2).toBeLessThanOrEqual(8_000);
    await f.clock.advance(d2);
    expect(f.ledger.submits).toHaveLength(3);
    const d3 = f.intent('lb-accept-7').nextAttemptAt! - f.clock.now();
    expect(d3).toBeGreaterThanOrEqual(8_000);
    expect(d3).toBeLessThanOrEqual(16_000);
    await f.clock.advance(d3);
    expect(f.ledger.submits).toHaveLength(4);
    f.tracker.onCompletion(completionOf(last(f), 99), 99);
    expect(f.intent('lb-accept-7')).toMatchObject({ state: 'succeeded', attempts: 4 });
    expect(new Set(f.ledger.submits.map((s) => s.commandId))).toEqual(new Set(['lb-accept-7']));
    expect(new Set(f.ledger.submits.map((s) => s.submissionId)).size).toBe(4);
  });

  it('never retries sooner than retryInfo says', async () => {
    f = trackerFixture();
    f.ledger.submitScript.push(() => {
      // cantonError gives category 2 errors retryInfo "1 second".
      throw apiError('SEQUENCER_BACKPRESSURE', 2, 10, 'busy', {}, 409);
    });
    await f.track(
      newIntent(8, {
        payload: payload({
          retry: { maxAttempts: 5, initialDelayMs: 10, maxDelayMs: 20, deadlineMs: 600_000 },
        }),
      }),
    );
    const t0 = f.clock.now();
    await f.clock.advance(0);
    expect(f.intent('lb-accept-8').nextAttemptAt! - t0).toBe(1_000);
    await f.clock.advance(999);
    expect(f.ledger.submits).toHaveLength(1);
    await f.clock.advance(1);
    expect(f.ledger.submits).toHaveLength(2);
  });

  it('resubmits an unknown outcome under the same commandId with a NEW submissionId', async () => {
    f = trackerFixture();
    f.ledger.submitScript.push(lostResponse);
    await f.track(newIntent(12));
    await f.clock.advance(0);
    expect(f.intent('lb-accept-12').lastError).toMatchObject({ code: 'LEDGER_TRANSPORT_RESET' });
    await f.clock.advance(1_000);
    expect(f.ledger.submits).toHaveLength(2);
    const [a, b] = f.ledger.submits;
    expect(b!.commandId).toBe(a!.commandId);
    expect(b!.submissionId).not.toBe(a!.submissionId);
    expect(b!.deduplicationPeriod).toEqual(a!.deduplicationPeriod);
    // The lost attempt had landed: its success completion finishes the intent.
    f.tracker.onCompletion(completionOf(a!, 80), 80);
    expect(f.intent('lb-accept-12').state).toBe('succeeded');
  });

  it('ignores the failed completion of a replaced attempt', async () => {
    f = trackerFixture();
    f.ledger.submitScript.push(lostResponse);
    await f.track(newIntent(13));
    await f.clock.advance(0);
    await f.clock.advance(1_000);
    const [a, b] = f.ledger.submits;
    f.tracker.onCompletion(
      completionOf(a!, 81, {
        code: 'NOT_SEQUENCED_TIMEOUT',
        category: 2,
        grpc: 10,
        cause: 'timeout',
      }),
      81,
    );
    expect(f.intent('lb-accept-13')).toMatchObject({
      state: 'submitted',
      submissionId: b!.submissionId,
    });
    f.tracker.onCompletion(completionOf(b!, 82), 82);
    expect(f.intent('lb-accept-13').state).toBe('succeeded');
  });

  it('resubmits when no completion comes within completionTimeout', async () => {
    f = trackerFixture({ completionTimeoutMs: 3_000 });
    await f.track(newIntent(14));
    await f.clock.advance(0);
    await f.clock.advance(2_999);
    expect(f.ledger.submits).toHaveLength(1);
    await f.clock.advance(1);
    expect(f.ledger.submits).toHaveLength(2);
    expect(f.intent('lb-accept-14')).toMatchObject({ state: 'submitted', attempts: 2 });
    expect(f.ledger.submits[1]!.submissionId).not.toBe(f.ledger.submits[0]!.submissionId);
  });

  it('after contention, rejects the intent when the contract it needs is archived', async () => {
    f = trackerFixture();
    f.ledger.contracts.set(INVOICE_CID, 'archived');
    await f.track(newIntent(15));
    await f.clock.advance(0);
    f.tracker.onCompletion(
      completionOf(last(f), 90, {
        code: 'LOCAL_VERDICT_INACTIVE_CONTRACTS',
        category: 11,
        grpc: 5,
        cause: 'inactive contracts',
        definiteAnswer: true,
      }),
      90,
    );
    await f.clock.advance(0);
    expect(f.ledger.lookups.map((l) => l.contractId)).toEqual([INVOICE_CID]);
    expect(f.intent('lb-accept-15')).toMatchObject({ state: 'rejected' });
    expect(f.intent('lb-accept-15').lastError).toMatchObject({
      code: 'LOCAL_VERDICT_INACTIVE_CONTRACTS',
      reason: 'not-needed',
      contractId: INVOICE_CID,
    });
    expect(f.store.getDeadLetter('lb-accept-15')).toBeUndefined();
    await f.clock.advance(60_000);
    expect(f.ledger.submits).toHaveLength(1);
  });

  it('after contention, retries when the contract is still active', async () => {
    f = trackerFixture();
    f.ledger.contracts.set(INVOICE_CID, 'active');
    f.ledger.submitScript.push(() => {
      throw apiError('CONTRACT_NOT_FOUND', 11, 5, 'not found', {}, 404);
    });
    await f.track(newIntent(16));
    await f.clock.advance(0);
    expect(f.ledger.lookups).toHaveLength(1);
    expect(f.intent('lb-accept-16').state).toBe('pending');
    await f.clock.advance(1_000);
    expect(f.ledger.submits).toHaveLength(2);
  });

  it('dead-letters a final rejection with the last error and the triggering event', async () => {
    f = trackerFixture();
    f.ledger.submitScript.push(() => {
      throw apiError('DAML_AUTHORIZATION_ERROR', 8, 3, 'missing authorization', {}, 400);
    });
    await f.track(newIntent(17));
    await f.clock.advance(0);
    const dl = f.store.getDeadLetter('lb-accept-17');
    expect(dl?.intent.state).toBe('dead-lettered');
    expect(dl?.error).toMatchObject({ code: 'DAML_AUTHORIZATION_ERROR', reason: 'final' });
    expect(dl?.event).toEqual({ updateId: 'upd-17', offset: 17 });
    expect(f.admission.inFlight).toBe(0);
  });

  it('dead-letters an intent whose journalled payload this version cannot use, without submitting', async () => {
    f = trackerFixture();
    const unusable = { ...payload(), version: 2 } as unknown as SubmissionPayload;
    await f.track(newIntent(45, { payload: unusable }));
    await f.clock.advance(60_000);
    expect(f.ledger.submits).toEqual([]);
    expect(f.intent('lb-accept-45')).toMatchObject({
      state: 'dead-lettered',
      lastError: { code: 'PAYLOAD_UNKNOWN_VERSION', reason: 'bad-payload' },
    });
    expect(f.admission.inFlight).toBe(0);
    expect(f.tracker.has('lb-accept-45')).toBe(false);
  });

  it('dead-letters after maxAttempts', async () => {
    f = trackerFixture();
    for (let i = 0; i < 3; i++) f.ledger.submitScript.push(lostResponse);
    await f.track(
      newIntent(18, {
        payload: payload({
          retry: { maxAttempts: 3, initialDelayMs: 100, maxDelayMs: 100, deadlineMs: 600_000 },
        }),
      }),
    );
    await f.clock.advance(0);
    for (let i = 0; i < 5; i++) await f.clock.advance(100);
    expect(f.ledger.submits).toHaveLength(3);
    const dl = f.store.getDeadLetter('lb-accept-18');
    expect(dl?.error).toMatchObject({ code: 'LEDGER_TRANSPORT_RESET', reason: 'max-attempts' });
    expect(dl?.intent.attempts).toBe(3);
  });

  it('dead-letters at the deadline', async () => {
    f = trackerFixture();
    const busy = (): never => {
      throw apiError('PARTICIPANT_BACKPRESSURE', 2, 10, 'overloaded', {}, 409);
    };
    for (let i = 0; i < 20; i++) f.ledger.submitScript.push(busy);
    await f.track(
      newIntent(19, {
        deadline: f.clock.now() + 5_000,
        payload: payload({
          retry: { maxAttempts: 100, initialDelayMs: 1_000, maxDelayMs: 1_000, deadlineMs: 5_000 },
        }),
      }),
    );
    await f.clock.advance(0);
    for (let i = 0; i < 10; i++) await f.clock.advance(1_000);
    const dl = f.store.getDeadLetter('lb-accept-19');
    expect(dl?.error).toMatchObject({ code: 'PARTICIPANT_BACKPRESSURE', reason: 'deadline' });
    expect(f.ledger.submits.length).toBeGreaterThanOrEqual(4);
    expect(f.ledger.submits.length).toBeLessThanOrEqual(5);
  });

  it('falls back to a dedup duration when the participant refuses the offset', async () => {
    f = trackerFixture({ dedup: { mode: 'offset', fallbackMs: 90_500 } });
    f.ledger.submitScript.push(() => {
      throw apiError(
        'INVALID_DEDUPLICATION_PERIOD',
        9,
        9,
        'too early',
        { longest_duration: 'PT168H' },
        400,
      );
    });
    await f.track(newIntent(20));
    await f.clock.advance(0);
    expect(f.ledger.submits[0]!.deduplicationPeriod).toEqual({
      DeduplicationOffset: { value: 20 },
    });
    expect(f.ledger.submits).toHaveLength(2);
    expect(f.ledger.submits[1]!.deduplicationPeriod).toEqual({
      DeduplicationDuration: { value: { seconds: 90, nanos: 500_000_000 } },
    });
    expect(f.ledger.submits[1]!.commandId).toBe('lb-accept-20');
  });

  it('uses a dedup duration from the start in duration mode', async () => {
    f = trackerFixture({ dedup: { mode: 'duration', valueMs: 86_400_000 } });
    await f.track(newIntent(21));
    await f.clock.advance(0);
    expect(last(f).deduplicationPeriod).toEqual({
      DeduplicationDuration: { value: { seconds: 86_400, nanos: 0 } },
    });
  });

  it('deduplicates a schedule slot from before the slot time, growing with each attempt', async () => {
    f = trackerFixture();
    const slot = f.clock.now() - 5 * 60_000;
    f.ledger.submitScript.push(lostResponse);
    await f.track(newIntent(30, { trigger: { kind: 'slot', slot, contractId: INVOICE_CID } }));
    await f.clock.advance(0);
    // 5 minutes since the slot plus one minute of slack; the snapshot offset (30) is not used,
    // because another replica may have read a different one for the same slot.
    expect(f.ledger.submits[0]!.deduplicationPeriod).toEqual({
      DeduplicationDuration: { value: { seconds: 360, nanos: 0 } },
    });
    await f.clock.advance(120_000);
    expect(f.ledger.submits.length).toBeGreaterThanOrEqual(2);
    const again = last(f).deduplicationPeriod as {
      DeduplicationDuration: { value: { seconds: number } };
    };
    expect(again.DeduplicationDuration.value.seconds).toBeGreaterThan(360);
    expect(last(f).commandId).toBe(f.ledger.submits[0]!.commandId);
  });

  it('falls back to the configured duration when a slot window exceeds the participant maximum', async () => {
    f = trackerFixture({ dedup: { mode: 'offset', fallbackMs: 3_600_000 } });
    f.ledger.submitScript.push(() => {
      throw apiError('INVALID_DEDUPLICATION_PERIOD', 9, 9, 'too long', {}, 400);
    });
    const slot = f.clock.now() - 30 * 86_400_000;
    await f.track(newIntent(31, { trigger: { kind: 'slot', slot, contractId: INVOICE_CID } }));
    await f.clock.advance(0);
    expect(f.ledger.submits[1]!.deduplicationPeriod).toEqual({
      DeduplicationDuration: { value: { seconds: 3600, nanos: 0 } },
    });
  });

  it('resubmits an intent found `submitted` in the journal at once, with its commandId', async () => {
    f = trackerFixture();
    const [record] = f.store.recordIntents([newIntent(22)]).inserted;
    f.store.transition(record!.commandId, { to: 'submitted', submissionId: 'from-last-run' });
    const permit = await f.admission.acquire('accept', 4);
    f.tracker.track(f.intent('lb-accept-22'), permit);
    await f.clock.advance(0);
    expect(last(f).commandId).toBe('lb-accept-22');
    expect(last(f).submissionId).not.toBe('from-last-run');
    // The earlier run's attempt had landed; its replayed completion counts.
    f.tracker.onCompletion(completionOf({ ...last(f), submissionId: 'from-last-run' }, 23), 23);
    expect(f.intent('lb-accept-22')).toMatchObject({ state: 'succeeded', attempts: 2 });
  });

  it('drain waits for outstanding completions up to the grace period, then leaves the rest to the next start', async () => {
    f = trackerFixture({ completionTimeoutMs: 60_000 });
    await f.track(newIntent(30));
    await f.track(newIntent(31));
    await f.clock.advance(0);
    let drained = false;
    const draining = f.tracker.drain(5_000).then(() => (drained = true));
    await f.clock.advance(0);
    expect(drained).toBe(false);
    f.tracker.onCompletion(completionOf(f.ledger.submits[0]!, 40), 40);
    await f.clock.advance(0);
    expect(drained).toBe(false);
    await f.clock.advance(5_000);
    await draining;
    expect(f.intent('lb-accept-30').state).toBe('succeeded');
    expect(f.intent('lb-accept-31').state).toBe('submitted');
  });
});
