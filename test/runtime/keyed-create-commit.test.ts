import { afterEach, describe, expect, it } from 'vitest';
import { parseJsCantonError } from '../../src/ledger/js-canton-error.js';
import { LedgerApiError } from '../../src/ledger/ledger-api-error.js';
import { LedgerTransportError } from '../../src/ledger/ledger-transport-error.js';
import type { JsCommands } from '../../src/ledger/wire/wire-types.js';
import { cantonError } from '../ledger/samples.js';
import {
  completionOf,
  lostResponse,
  newIntent,
  payload,
  PAYER,
  trackerFixture,
  type TrackerFixture,
} from './tracker-fixture.js';

let f: TrackerFixture;
afterEach(() => f.cleanup());

const KEYED_CREATE = payload({
  commands: [
    {
      CreateCommand: {
        templateId: '#invoices:Invoice:Invoice',
        createArguments: { issuer: PAYER, payer: PAYER, reference: 'INV-1' },
      },
    },
  ],
});

/**
 * A resubmitted create whose key its own first attempt already took: the participant interprets
 * before it deduplicates, so the repeat is refused as DUPLICATE_CONTRACT_KEY (409, category 10),
 * never DUPLICATE_COMMAND, and there is no archived contract to look at.
 */
const keyTaken = (): never => {
  const body = cantonError(
    'DUPLICATE_CONTRACT_KEY',
    10,
    6,
    'Inconsistent: DuplicateContractKey(...)',
  );
  throw new LedgerApiError(parseJsCantonError(body)!, 'POST /v2/commands/async/submit', 409);
};

/** The intent at `offset`, as created by `KEYED_CREATE`. */
function keyedIntent(offset: number) {
  return newIntent(offset, { commandId: `lb-create-${offset}`, payload: KEYED_CREATE });
}

/** The first attempt's submission, as the ledger saw it, with another submissionId. */
function firstAttempt(commandId: string): JsCommands {
  return {
    commands: KEYED_CREATE.commands,
    commandId,
    userId: 'ledgerbot',
    actAs: [PAYER],
    submissionId: 'first-attempt',
  } as JsCommands;
}

describe('SubmissionTracker: a keyed create refused because its own earlier attempt took the key', () => {
  it('lost response, resubmit, DUPLICATE_CONTRACT_KEY, a successful completion of the commandId -> succeeded', async () => {
    f = trackerFixture();
    f.ledger.end = 90;
    f.ledger.submitScript.push(lostResponse, keyTaken);
    // Other commands' completions around ours; ours succeeded at 61.
    f.ledger.completionLog.push(
      { offset: 45, completion: completionOf(firstAttempt('lb-other'), 45) },
      { offset: 61, completion: completionOf(firstAttempt('lb-create-40'), 61) },
    );
    await f.track(keyedIntent(40));
    await f.clock.advance(0);
    await f.clock.advance(1_000);
    expect(f.ledger.submits).toHaveLength(2);
    expect(f.intent('lb-create-40')).toMatchObject({
      state: 'succeeded',
      completionOffset: 61,
      completionUpdateId: 'tx-61',
    });
    expect(f.metrics.earlierCommitsFound).toBe(1);
    // Read from the intent's offset, for its user and actAs, a page at a time.
    expect(f.ledger.completionListRequests[0]).toEqual({
      request: { userId: 'ledgerbot', parties: [PAYER], beginExclusive: 40 },
      limit: 200,
    });
  });

  it('a rejected completion of the commandId is not a commit: retried, not settled', async () => {
    f = trackerFixture();
    f.ledger.end = 90;
    f.ledger.submitScript.push(keyTaken);
    f.ledger.completionLog.push({
      offset: 50,
      completion: completionOf(firstAttempt('lb-create-40'), 50, {
        code: 'LOCAL_VERDICT_LOCKED_CONTRACTS',
        category: 2,
        grpc: 10,
        cause: 'locked contracts',
        definiteAnswer: true,
      }),
    });
    await f.track(keyedIntent(40));
    await f.clock.advance(0);
    expect(f.intent('lb-create-40')).toMatchObject({ state: 'pending', attempts: 1 });
    expect(f.metrics.earlierCommitsFound).toBe(0);
  });

  it('reads every page up to the ledger end', async () => {
    f = trackerFixture();
    f.ledger.end = 1_000;
    f.ledger.submitScript.push(keyTaken);
    for (let o = 11; o <= 460; o++) {
      const id = o === 455 ? 'lb-create-10' : `lb-other-${o}`;
      f.ledger.completionLog.push({ offset: o, completion: completionOf(firstAttempt(id), o) });
    }
    await f.track(keyedIntent(10));
    await f.clock.advance(0);
    expect(f.intent('lb-create-10')).toMatchObject({ state: 'succeeded', completionOffset: 455 });
    expect(f.ledger.completionListRequests.map((r) => r.request.beginExclusive)).toEqual([
      10, 210, 410,
    ]);
  });

  it('a failed read of the completions retries instead of guessing', async () => {
    f = trackerFixture();
    f.ledger.end = 90;
    f.ledger.submitScript.push(keyTaken, () => ({}));
    f.ledger.completionListErrors.push(
      new LedgerTransportError('reset', 'POST /v2/commands/completions', 'socket hang up'),
    );
    await f.track(keyedIntent(40));
    await f.clock.advance(0);
    expect(f.intent('lb-create-40')).toMatchObject({ state: 'pending', attempts: 1 });
    // The retry goes out under the same commandId and is accepted this time.
    await f.clock.advance(3_000);
    expect(f.ledger.submits).toHaveLength(2);
    expect(f.intent('lb-create-40').state).toBe('submitted');
  });

  it('only a key conflict reads the completions: a lock on an active input does not', async () => {
    f = trackerFixture();
    f.ledger.submitScript.push(() => {
      const body = cantonError('LOCAL_VERDICT_LOCKED_CONTRACTS', 2, 10, 'Locked');
      throw new LedgerApiError(parseJsCantonError(body)!, 'POST /v2/commands/async/submit', 409);
    });
    f.ledger.contracts.set('00invoice', 'active');
    await f.track(newIntent(41));
    await f.clock.advance(0);
    expect(f.intent('lb-accept-41').state).toBe('pending');
    expect(f.ledger.completionListRequests).toHaveLength(0);
  });

  it('stops at the ledger end read before the lookup', async () => {
    f = trackerFixture();
    f.ledger.end = 300;
    f.ledger.submitScript.push(keyTaken);
    for (let o = 11; o <= 460; o++) {
      f.ledger.completionLog.push({
        offset: o,
        completion: completionOf(firstAttempt(`lb-other-${o}`), o),
      });
    }
    await f.track(keyedIntent(10));
    await f.clock.advance(0);
    // The second page passes the end (300): nothing after it is read.
    expect(f.ledger.completionListRequests.map((r) => r.request.beginExclusive)).toEqual([10, 210]);
    expect(f.intent('lb-create-10')).toMatchObject({ state: 'pending', attempts: 1 });
  });

  it('gives up reading after 10,000 completions: retried, not settled on a guess', async () => {
    f = trackerFixture();
    f.ledger.end = 20_000;
    f.ledger.submitScript.push(keyTaken);
    // Ours is beyond the bound.
    for (let o = 11; o <= 10_300; o++) {
      const id = o === 10_250 ? 'lb-create-10' : `lb-other-${o}`;
      f.ledger.completionLog.push({ offset: o, completion: completionOf(firstAttempt(id), o) });
    }
    await f.track(keyedIntent(10));
    // Fifty pages take more turns of the event loop than one advance flushes.
    const retried = (): boolean => {
      const r = f.intent('lb-create-10');
      return r.state === 'pending' && r.attempts === 1;
    };
    for (let i = 0; i < 100 && !retried(); i++) {
      await f.clock.advance(0);
    }
    expect(f.ledger.completionListRequests).toHaveLength(50);
    expect(f.intent('lb-create-10')).toMatchObject({ state: 'pending', attempts: 1 });
    expect(f.metrics.earlierCommitsFound).toBe(0);
  });

  it('a createAndExercise refused on INCONSISTENT_CONTRACT_KEY names no contract: its completion decides', async () => {
    f = trackerFixture();
    f.ledger.end = 90;
    const createAndExercise = payload({
      commands: [
        {
          CreateAndExerciseCommand: {
            templateId: '#invoices:Invoice:Invoice',
            createArguments: { issuer: PAYER, payer: PAYER, reference: 'INV-2' },
            choice: 'Accept',
            choiceArgument: {},
          },
        },
      ],
    });
    f.ledger.submitScript.push(lostResponse, () => {
      const body = cantonError('INCONSISTENT_CONTRACT_KEY', 10, 6, 'Inconsistent: key');
      throw new LedgerApiError(parseJsCantonError(body)!, 'POST /v2/commands/async/submit', 409);
    });
    f.ledger.completionLog.push({
      offset: 70,
      completion: completionOf(firstAttempt('lb-cae-42'), 70),
    });
    await f.track(newIntent(42, { commandId: 'lb-cae-42', payload: createAndExercise }));
    await f.clock.advance(0);
    await f.clock.advance(1_000);
    expect(f.intent('lb-cae-42')).toMatchObject({
      state: 'succeeded',
      completionOffset: 70,
      completionUpdateId: 'tx-70',
    });
    // No contract to look at: no archived-event lookup was made.
    expect(f.ledger.updateLookups).toHaveLength(0);
  });
});

describe('SubmissionTracker: a keyed create whose completions the participant pruned', () => {
  it('reads on from the pruning offset and finds a success there', async () => {
    f = trackerFixture();
    f.ledger.end = 90;
    f.ledger.prunedUpTo = 50;
    f.ledger.submitScript.push(lostResponse, keyTaken);
    f.ledger.completionLog.push({
      offset: 61,
      completion: completionOf(firstAttempt('lb-create-40'), 61),
    });
    await f.track(keyedIntent(40));
    await f.clock.advance(0);
    await f.clock.advance(1_000);
    expect(f.intent('lb-create-40')).toMatchObject({ state: 'succeeded', completionOffset: 61 });
    expect(f.ledger.completionListRequests.map((r) => r.request.beginExclusive)).toEqual([40, 50]);
  });

  it('an intent in doubt with nothing after the pruning offset is dead-lettered EARLIER_COMMIT_UNKNOWN, not retried', async () => {
    f = trackerFixture();
    f.ledger.end = 90;
    f.ledger.prunedUpTo = 50;
    f.ledger.submitScript.push(lostResponse, keyTaken);
    await f.track(keyedIntent(40));
    await f.clock.advance(0);
    await f.clock.advance(1_000);
    expect(f.intent('lb-create-40').state).toBe('dead-lettered');
    expect(f.store.getDeadLetter('lb-create-40')?.error).toMatchObject({
      code: 'EARLIER_COMMIT_UNKNOWN',
      reason: 'final',
    });
    expect(f.ledger.submits).toHaveLength(2);
  });

  it('an intent never in doubt is retried as before: none of its attempts can have committed', async () => {
    f = trackerFixture();
    f.ledger.end = 90;
    f.ledger.prunedUpTo = 50;
    f.ledger.submitScript.push(keyTaken);
    await f.track(keyedIntent(40));
    await f.clock.advance(0);
    expect(f.intent('lb-create-40')).toMatchObject({ state: 'pending', attempts: 1 });
  });

  it('cannot read how far it pruned: retried, never guessed', async () => {
    f = trackerFixture();
    f.ledger.end = 90;
    f.ledger.prunedUpTo = 50;
    f.ledger.submitScript.push(lostResponse, keyTaken);
    f.ledger.prunedOffsetsError = new Error('unavailable');
    await f.track(keyedIntent(40));
    await f.clock.advance(0);
    await f.clock.advance(1_000);
    expect(f.intent('lb-create-40')).toMatchObject({ state: 'pending', attempts: 2 });
  });
});
