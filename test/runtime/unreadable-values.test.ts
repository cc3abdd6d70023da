import { afterEach, describe, expect, it } from 'vitest';
import { describeCommands } from '../../src/runtime/unreadable-values.js';
import { apiError } from './fake-ledger.js';
import { newIntent, payload, trackerFixture, type TrackerFixture } from './tracker-fixture.js';

let f: TrackerFixture;
afterEach(() => f.cleanup());

/** What 3.5 answers a value it cannot transcode (an Int64 sent as a JSON number, say). */
const internalError = (): never => {
  const err = apiError(
    'LEDGER_API_INTERNAL_ERROR',
    4,
    13,
    'Unexpected error: java.lang.ClassCastException',
    { definite_answer: 'false' },
    500,
  );
  throw err;
};

const retry = { maxAttempts: 5, initialDelayMs: 100, maxDelayMs: 100, deadlineMs: 600_000 };

describe('SubmissionTracker: LEDGER_API_INTERNAL_ERROR on submit', () => {
  it('is retried, then dead-lettered as unreadable values after 3 attempts, naming template and choice', async () => {
    f = trackerFixture();
    for (let i = 0; i < 5; i++) f.ledger.submitScript.push(internalError);
    await f.track(newIntent(70, { payload: payload({ retry }) }));
    await f.clock.advance(0);
    expect(f.intent('lb-accept-70').state).toBe('pending');
    for (let i = 0; i < 10; i++) await f.clock.advance(100);
    // Fewer than maxAttempts (5): a transcoding failure fails the same way every time.
    expect(f.ledger.submits).toHaveLength(3);
    const dl = f.store.getDeadLetter('lb-accept-70');
    expect(dl?.intent).toMatchObject({ state: 'dead-lettered', attempts: 3 });
    expect(dl?.error).toMatchObject({
      code: 'LEDGER_API_INTERNAL_ERROR',
      reason: 'unreadable-values',
      status: 500,
    });
    const message = (dl?.error as { message: string }).message;
    expect(message).toContain("the participant could not read the command's values");
    expect(message).toContain('exercise Accept on #invoices:Invoice:Invoice');
    expect(message).toContain('on 3 attempt(s)');
    expect(f.events.map((e) => e.to)).toEqual([
      'submitted',
      'pending',
      'submitted',
      'pending',
      'submitted',
      'dead-lettered',
    ]);
    expect(f.admission.inFlight).toBe(0);
  });

  it('a transient internal error followed by an acceptance is not given up', async () => {
    f = trackerFixture();
    f.ledger.submitScript.push(internalError, internalError);
    await f.track(newIntent(71, { payload: payload({ retry }) }));
    await f.clock.advance(0);
    for (let i = 0; i < 3; i++) await f.clock.advance(100);
    expect(f.ledger.submits).toHaveLength(3);
    expect(f.intent('lb-accept-71').state).toBe('submitted');
    expect(f.store.getDeadLetter('lb-accept-71')).toBeUndefined();
  });

  it('with maxAttempts below the bound, the dead letter still says unreadable values', async () => {
    f = trackerFixture();
    f.ledger.submitScript.push(internalError, internalError);
    await f.track(newIntent(72, { payload: payload({ retry: { ...retry, maxAttempts: 2 } }) }));
    await f.clock.advance(0);
    for (let i = 0; i < 3; i++) await f.clock.advance(100);
    expect(f.ledger.submits).toHaveLength(2);
    expect(f.store.getDeadLetter('lb-accept-72')?.error).toMatchObject({
      reason: 'unreadable-values',
    });
  });

  it('other internal-looking errors keep their own handling (a redacted NA is an unknown outcome)', async () => {
    f = trackerFixture();
    f.ledger.submitScript.push(() => {
      throw apiError('NA', -1, 13, 'A security-sensitive error has been received', {}, 500);
    });
    await f.track(newIntent(73, { payload: payload({ retry }) }));
    await f.clock.advance(0);
    expect(f.intent('lb-accept-73').state).toBe('pending');
    await f.clock.advance(100);
    expect(f.intent('lb-accept-73').state).toBe('submitted');
  });
});

describe('describeCommands', () => {
  it('names each command by kind, template and choice', () => {
    expect(
      describeCommands(
        payload({
          commands: [
            { CreateCommand: { templateId: '#p:M:T', createArguments: {} } },
            {
              CreateAndExerciseCommand: {
                templateId: '#p:M:U',
                createArguments: {},
                choice: 'Go',
                choiceArgument: {},
              },
            },
          ],
        }),
      ),
    ).toBe('create #p:M:T; createAndExercise Go on #p:M:U');
  });
});
