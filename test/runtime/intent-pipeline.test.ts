import { afterEach, describe, expect, it } from 'vitest';
import { AbortError } from '../../src/core/abort-error.js';
import type { Intent } from '../../src/rules/evaluation-result.js';
import { Admission } from '../../src/runtime/admission.js';
import { JournalPipeline } from '../../src/runtime/intent-pipeline.js';
import { RuntimeError } from '../../src/runtime/runtime-error.js';
import { decodedJournal } from '../../src/runtime/submission-payload.js';
import type { IntentEvent } from '../../src/runtime/submission-tracker.js';
import { invoiceCreated, PAYER } from './bot-fixture.js';
import { evaluated, FakeTracker, partsFixture, type PartsFixture } from './parts-fixture.js';

let f: PartsFixture | undefined;
afterEach(() => {
  f?.cleanup();
  f = undefined;
});

function pipeline(fx: PartsFixture, options: { maxInFlight?: number; running?: boolean } = {}) {
  const tracker = new FakeTracker();
  const intents: IntentEvent[] = [];
  const intake = new AbortController();
  const p = new JournalPipeline({
    store: decodedJournal(fx.store),
    checkpoint: fx.checkpoint,
    admission: new Admission(options.maxInFlight ?? 8),
    tracker,
    clock: fx.clock,
    metrics: fx.metrics,
    logger: fx.logger,
    userId: 'ledgerbot',
    intake: intake.signal,
    onIntent: (e) => intents.push(e),
    assertRunning: (action) => {
      if (options.running === false) throw new RuntimeError('NOT_RUNNING', action);
    },
  });
  return { p, tracker, intents, intake };
}

describe('JournalPipeline', () => {
  it('records an event intent write-ahead with its checkpoint candidate, then admits it', async () => {
    f = partsFixture();
    const { p, tracker, intents } = pipeline(f);
    const counts = await p.submitEvent(evaluated(f, invoiceCreated(11)), true);
    expect(counts).toEqual({ inserted: 1, existing: 0 });
    const [record] = f.store.listIntents();
    expect(record).toMatchObject({
      ruleId: 'accept',
      state: 'pending',
      offset: 11,
      userId: 'ledgerbot',
      actAs: [PAYER],
      trigger: { kind: 'event', updateId: 'upd-11', nodeId: 0 },
    });
    // The deadline is the rule's retry deadline from now; the first attempt is due at once.
    expect(record?.deadline).toBe(f.clock.now() + 3_600_000);
    expect([...tracker.tracked.keys()]).toEqual([record?.commandId]);
    expect(intents.map((e) => [e.from, e.to])).toEqual([[null, 'pending']]);
    expect(f.metrics.snapshot()).toMatchObject({
      intentsRecorded: 1,
      intentTransitions: { pending: 1 },
    });
    expect(
      f.logger.lines.filter((l) => l.msg === 'intent state changed').map((l) => l.level),
    ).toEqual(['debug']);
    // Processed through 11, but its intent is open: the checkpoint stays below it.
    expect(f.store.checkpoint()).toBe(10);
  });

  it('moves the checkpoint on for a live transaction without intents, not for a replayed one', async () => {
    f = partsFixture();
    const { p } = pipeline(f);
    await p.submitEvent(evaluated(f, invoiceCreated(5, { currency: 'EUR' }), false), false);
    expect(f.store.checkpoint()).toBeUndefined();
    await p.submitEvent(evaluated(f, invoiceCreated(6, { currency: 'EUR' })), true);
    expect(f.store.checkpoint()).toBe(6);
    expect(f.store.listIntents()).toEqual([]);
  });

  it('on a replay, admits the journal open intents nobody works on, and nothing terminal', async () => {
    f = partsFixture();
    const first = pipeline(f);
    await first.p.submitEvent(evaluated(f, invoiceCreated(1)), true);
    await first.p.submitEvent(evaluated(f, invoiceCreated(2)), true);
    const [one, two] = f.store.listIntents().sort((a, b) => a.offset - b.offset);
    f.store.transition(two!.commandId, { to: 'submitted', submissionId: 's' });
    f.store.transition(two!.commandId, { to: 'succeeded' });

    const again = pipeline(f); // a restart: an empty tracker
    expect(await again.p.submitEvent(evaluated(f, invoiceCreated(1)), true)).toEqual({
      inserted: 0,
      existing: 1,
    });
    expect(await again.p.submitEvent(evaluated(f, invoiceCreated(2)), true)).toEqual({
      inserted: 0,
      existing: 1,
    });
    expect([...again.tracker.tracked.keys()]).toEqual([one!.commandId]);
    expect(again.intents).toEqual([]);
    // Already tracked: not handed over twice.
    await again.p.submitEvent(evaluated(f, invoiceCreated(1)), true);
    expect(again.tracker.tracked.size).toBe(1);
  });

  it('waits for admission at the maxInFlight bound, and the wait ends at the intake abort', async () => {
    f = partsFixture();
    const { p, tracker, intake } = pipeline(f, { maxInFlight: 1 });
    await p.submitEvent(evaluated(f, invoiceCreated(1)), true);
    const second = p.submitEvent(evaluated(f, invoiceCreated(2)), true);
    await f.settle();
    expect(tracker.tracked.size).toBe(1);
    expect(f.metrics.waitingForAdmission).toBe(1);
    // The event waits for a place before it is recorded: its intent is recorded in the turn
    // its first attempt starts (one journal row for both). Not recorded, the event has not been
    // declared processed either, so a restart reads it again.
    expect(f.store.listIntents()).toHaveLength(1);
    tracker.finish([...tracker.tracked.keys()][0]!);
    await second;
    expect(f.store.listIntents()).toHaveLength(2);
    expect(tracker.tracked.size).toBe(1);
    expect(f.metrics.waitingForAdmission).toBe(0);

    const third = p.submitEvent(evaluated(f, invoiceCreated(3)), true);
    await f.settle();
    intake.abort(new AbortError('stopping'));
    await expect(third).rejects.toBeInstanceOf(AbortError);
  });

  it('records the intents of a schedule slot under their slot trigger and admits them', async () => {
    f = partsFixture();
    const { p, tracker } = pipeline(f);
    const [intent] = evaluated(f, invoiceCreated(7)).intents;
    const slot = Date.UTC(2026, 0, 5, 9);
    const slotIntent: Intent = {
      ...intent!,
      triggerKey: { kind: 'slot', slot, contractId: '00inv7' },
      commandId: 'lb-accept-slot',
      offset: 40,
    };
    await p.submitIntents([slotIntent], { ruleId: 'accept', slot, snapshotOffset: 40 });
    expect(f.store.getIntent('lb-accept-slot')).toMatchObject({
      trigger: { kind: 'slot', slot, contractId: '00inv7' },
      offset: 40,
      state: 'pending',
    });
    expect(tracker.has('lb-accept-slot')).toBe(true);
    // A slot does not declare any stream offset processed.
    expect(f.store.checkpoint()).toBeUndefined();
    // Recorded again (a re-run slot): left as it is.
    await p.submitIntents([slotIntent], { ruleId: 'accept', slot, snapshotOffset: 40 });
    expect(f.store.listIntents()).toHaveLength(1);
  });

  it('requeues a dead letter with a fresh deadline and admits it under the same commandId', async () => {
    f = partsFixture();
    const first = pipeline(f);
    await first.p.submitEvent(evaluated(f, invoiceCreated(3)), true);
    const [record] = f.store.listIntents();
    const commandId = record!.commandId;
    f.store.transition(commandId, { to: 'dead-lettered', error: { code: 'X', message: 'no' } });
    await f.clock.advance(60_000);

    const { p, tracker, intents } = pipeline(f);
    const requeued = p.retryDeadLetter(commandId);
    expect(requeued).toMatchObject({ commandId, state: 'pending', attempts: 0 });
    expect(requeued.deadline).toBe(f.clock.now() + 3_600_000);
    expect(intents.map((e) => [e.from, e.to])).toEqual([['dead-lettered', 'pending']]);
    await f.settle();
    expect(tracker.has(commandId)).toBe(true);
    expect(f.logger.lines.some((l) => l.msg === 'dead letter requeued')).toBe(true);
  });

  it('refuses a retry of what is not dead-lettered, and any retry while the bot is not running', () => {
    f = partsFixture();
    expect(() => pipeline(f!).p.retryDeadLetter('lb-nope')).toThrow(
      expect.objectContaining({ code: 'NOT_DEAD_LETTERED' }),
    );
    expect(() => pipeline(f!, { running: false }).p.retryDeadLetter('lb-nope')).toThrow(
      expect.objectContaining({ code: 'NOT_RUNNING' }),
    );
  });

  it('resumes the open intents of the journal once each, oldest first', async () => {
    f = partsFixture();
    const first = pipeline(f);
    for (const offset of [3, 1, 2])
      await first.p.submitEvent(evaluated(f, invoiceCreated(offset)), true);
    const { p, tracker } = pipeline(f);
    expect(p.openIntents()).toHaveLength(3);
    await p.resumeOpen();
    expect([...tracker.tracked.values()].map((t) => t.record.offset)).toEqual([1, 2, 3]);
    await p.resumeOpen();
    expect(tracker.tracked.size).toBe(3);
    expect(f.logger.lines.filter((l) => l.msg === 'resumed open intents')).toHaveLength(1);
  });
});
