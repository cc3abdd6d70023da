import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/core/logger.js';
import type { JsCommands } from '../../src/ledger/wire/wire-types.js';
import { apiError } from './fake-ledger.js';
import {
  completionOf,
  INVOICE_CID,
  lostResponse,
  newIntent,
  payload,
  PAYER,
  trackerFixture,
  type TrackerFixture,
} from './tracker-fixture.js';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];
type Line = { level: Level; msg: string; fields: Record<string, unknown> };

/** A logger at `threshold`, as pino is: lines below it are dropped, and `isLevelEnabled` says so. */
function leveledLogger(threshold: Level): Logger & { lines: Line[]; dropped: number } {
  const lines: Line[] = [];
  const enabled = (level: string): boolean =>
    LEVELS.indexOf(level as Level) >= LEVELS.indexOf(threshold);
  const logger = {
    lines,
    dropped: 0,
    isLevelEnabled: enabled,
    child: () => logger,
    ...Object.fromEntries(
      LEVELS.map((level) => [
        level,
        (fields: Record<string, unknown>, msg: string) => {
          if (enabled(level)) lines.push({ level, msg, fields });
          else logger.dropped += 1;
        },
      ]),
    ),
  } as unknown as Logger & { lines: Line[]; dropped: number };
  return logger;
}

let f: TrackerFixture;
afterEach(() => f.cleanup());

const last = (fx: TrackerFixture): JsCommands => fx.ledger.submits[fx.ledger.submits.length - 1]!;
const intentLines = (lines: readonly Line[]): Line[] =>
  lines.filter((l) => l.msg === 'intent state changed' || l.msg === 'intent finished');

describe('intent log lines', () => {
  it('at info: one `intent finished` line per succeeded intent, with its attempts and timings, and no debug line built', async () => {
    const logger = leveledLogger('info');
    f = trackerFixture({ logger });
    await f.track(newIntent(41));
    await f.clock.advance(0);
    const sent = last(f);
    await f.clock.advance(250);
    f.tracker.onCompletion(completionOf(sent, 50), 50);
    expect(intentLines(logger.lines)).toEqual([
      {
        level: 'info',
        msg: 'intent finished',
        fields: {
          ruleId: 'accept',
          commandId: 'lb-accept-41',
          offset: 41,
          updateId: 'upd-41',
          nodeId: 0,
          from: 'submitted',
          state: 'succeeded',
          attempts: 1,
          submissionId: sent.submissionId,
          completionOffset: 50,
          completionUpdateId: 'tx-50',
          recordToSubmitMs: 0,
          recordToCompletionMs: 250,
        },
      },
    ]);
    // The `submitted` change was a debug line, dropped before its fields were built.
    expect(logger.dropped).toBe(0);
  });

  it('writes no command, party or payload into the finished line', async () => {
    const logger = leveledLogger('info');
    f = trackerFixture({ logger });
    await f.track(newIntent(42, { payload: payload({ workflowId: 'token-secret-workflow' }) }));
    await f.clock.advance(0);
    f.tracker.onCompletion(completionOf(last(f), 51), 51);
    const [line] = intentLines(logger.lines);
    const text = JSON.stringify(line);
    for (const secret of [
      PAYER,
      INVOICE_CID,
      'Accept',
      'token-secret-workflow',
      'ExerciseCommand',
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it('at debug: the recorded and submitted changes as debug lines, then the finished line', async () => {
    const logger = leveledLogger('debug');
    f = trackerFixture({ logger });
    await f.track(newIntent(43));
    await f.clock.advance(0);
    f.tracker.onCompletion(completionOf(last(f), 52), 52);
    // The tracker logs from `submitted` on (the pipeline logs the recording).
    expect(intentLines(logger.lines).map((l) => [l.level, l.msg, l.fields.state])).toEqual([
      ['debug', 'intent state changed', 'submitted'],
      ['info', 'intent finished', 'succeeded'],
    ]);
    expect(intentLines(logger.lines)[0]!.fields).toMatchObject({
      commandId: 'lb-accept-43',
      from: 'pending',
      attempts: 1,
      submissionId: last(f).submissionId,
    });
  });

  it('a retry after an error is a warn line with the error; the finished line counts every attempt', async () => {
    const logger = leveledLogger('info');
    f = trackerFixture({ logger });
    f.ledger.submitScript.push(lostResponse);
    await f.track(newIntent(44));
    await f.clock.advance(0);
    await f.clock.advance(1_000);
    f.tracker.onCompletion(completionOf(last(f), 53), 53);
    const lines = intentLines(logger.lines);
    expect(lines.map((l) => [l.level, l.msg, l.fields.state])).toEqual([
      ['warn', 'intent state changed', 'pending'],
      ['info', 'intent finished', 'succeeded'],
    ]);
    expect(lines[0]!.fields).toMatchObject({
      from: 'submitted',
      attempts: 1,
      errorCode: 'LEDGER_TRANSPORT_RESET',
    });
    // The retry was due within the first second (jittered backoff), and was made.
    expect(lines[0]!.fields.nextAttemptAt).toBeGreaterThan(f.clock.now() - 1_000);
    expect(lines[0]!.fields.nextAttemptAt).toBeLessThanOrEqual(f.clock.now());
    expect(lines[1]!.fields).toMatchObject({ attempts: 2, recordToSubmitMs: 0 });
    expect(lines[1]!.fields.recordToCompletionMs).toBe(1_000);
  });

  it('a duplicate is a finished line with the completion offset the ledger named', async () => {
    const logger = leveledLogger('info');
    f = trackerFixture({ logger });
    f.ledger.submitScript.push(() => {
      throw apiError(
        'DUPLICATE_COMMAND',
        10,
        6,
        'already processed',
        {
          completion_offset: '33',
        },
        409,
      );
    });
    await f.track(newIntent(45));
    await f.clock.advance(0);
    expect(intentLines(logger.lines)).toMatchObject([
      {
        level: 'info',
        msg: 'intent finished',
        fields: { state: 'duplicate', attempts: 1, completionOffset: 33, recordToSubmitMs: 0 },
      },
    ]);
  });

  it('a rejection is a warn line and a dead letter an error line, with the error', async () => {
    const logger = leveledLogger('info');
    f = trackerFixture({ logger });
    f.ledger.contracts.set(INVOICE_CID, 'archived');
    await f.track(newIntent(46));
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
    f.ledger.submitScript.push(lostResponse);
    const once = { maxAttempts: 1, initialDelayMs: 10, maxDelayMs: 20, deadlineMs: 600_000 };
    await f.track(newIntent(47, { payload: payload({ retry: once }) }));
    await f.clock.advance(0);
    const lines = intentLines(logger.lines).map((l) => [
      l.level,
      l.fields.commandId,
      l.fields.state,
      l.fields.errorCode,
    ]);
    expect(lines).toEqual([
      ['warn', 'lb-accept-46', 'rejected', expect.any(String)],
      ['error', 'lb-accept-47', 'dead-lettered', 'LEDGER_TRANSPORT_RESET'],
    ]);
  });

  it('an intent first submitted by an earlier run finishes without a time to its first submission', async () => {
    const logger = leveledLogger('info');
    f = trackerFixture({ logger });
    const [record] = f.store.recordIntents([newIntent(48)]).inserted;
    f.store.transition(record!.commandId, { to: 'submitted', submissionId: 'from-last-run' });
    f.tracker.track(f.intent('lb-accept-48'), await f.admission.acquire('accept', 4));
    await f.clock.advance(0);
    await f.clock.advance(30);
    f.tracker.onCompletion(completionOf(last(f), 60), 60);
    const [line] = intentLines(logger.lines);
    expect(line?.fields).toMatchObject({ state: 'succeeded', attempts: 2 });
    expect(line?.fields).not.toHaveProperty('recordToSubmitMs');
    expect(line?.fields.recordToCompletionMs).toBe(30);
  });
});
