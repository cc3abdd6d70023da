import { afterEach, describe, expect, it } from 'vitest';
import { AbortError } from '../../src/core/abort-error.js';
import type { Completion } from '../../src/ledger/wire/wire-types.js';
import type { UpdateEvaluation } from '../../src/runtime/evaluate-update.js';
import type { IntentPipeline } from '../../src/runtime/intent-pipeline.js';
import { CompletionFollower } from '../../src/runtime/completion-follower.js';
import { planSubscription, type SubscriptionPlan } from '../../src/runtime/subscription-plan.js';
import { TransactionIngest } from '../../src/runtime/transaction-ingest.js';
import { UpdateFollower } from '../../src/runtime/update-follower.js';
import { checkpointAt, invoiceCreated, PARTIES, PAYER, ISSUER } from './bot-fixture.js';
import { apiError, FakeLedger } from './fake-ledger.js';
import { partsFixture, type PartsFixture } from './parts-fixture.js';

let f: PartsFixture | undefined;
let stop: AbortController | undefined;
let task: Promise<void> | undefined;
afterEach(async () => {
  stop?.abort(new AbortError('test over'));
  await task;
  f?.cleanup();
  f = undefined;
});

function deps(fx: PartsFixture, ledger: FakeLedger) {
  stop = new AbortController();
  return {
    ledger,
    clock: fx.clock,
    random: fx.random,
    restartBackoff: { initialMs: 1_000, maxMs: 1_000 },
    streamBackoff: undefined,
    logger: fx.logger,
    metrics: fx.metrics,
    signal: stop.signal,
  };
}

describe('UpdateFollower', () => {
  function updates(fx: PartsFixture, plan: () => SubscriptionPlan = () => fx.book.plan) {
    const ledger = new FakeLedger();
    const submitted: UpdateEvaluation[] = [];
    const pipeline = {
      submitEvent: (e: UpdateEvaluation) => {
        submitted.push(e);
        return Promise.resolve({ inserted: 0, existing: 0 });
      },
    } as unknown as IntentPipeline;
    const offsets: number[] = [];
    fx.events.on('offset', (o) => offsets.push(o));
    const follower = new UpdateFollower({
      ...deps(fx, ledger),
      events: fx.events,
      plan,
      index: () => fx.book.index,
      ingest: new TransactionIngest({ ...fx, parties: PARTIES, pipeline }),
      checkpoint: fx.checkpoint,
      recover: () => Promise.resolve(0),
    });
    return { follower, ledger, submitted, offsets };
  }

  it('ingests transactions live, moves the checkpoint on for the rest, and records its positions', async () => {
    f = partsFixture();
    const u = updates(f);
    task = u.follower.run(10);
    await f.settle();
    expect(u.ledger.updateStreams[0]?.request.beginExclusive).toBe(10);
    u.ledger.updateQueue.push(invoiceCreated(11), checkpointAt(12));
    await f.settle();
    expect(u.submitted.map((e) => e.offset)).toEqual([11]);
    expect(f.metrics.transactionsSeen).toBe(1);
    expect(u.offsets).toEqual([11, 12]);
    expect(f.checkpoint.lastProcessed).toBe(12);
    expect(f.checkpoint.evaluatedThrough).toBe(12);
    expect(f.metrics.lastOffset).toBe(12);
    expect(f.store.checkpoint()).toBe(12);
  });

  it('without event rules waits; once a reload adds some, begins at the ledger end of that moment', async () => {
    f = partsFixture();
    let plan = planSubscription({ rules: [], warnings: [] }, PARTIES);
    const u = updates(f, () => plan);
    task = u.follower.run(3);
    await f.settle();
    expect(u.ledger.updateStreams).toEqual([]);
    u.ledger.end = 40;
    plan = f.book.plan;
    u.follower.resubscribe();
    await f.settle();
    expect(u.ledger.updateStreams.map((s) => s.request.beginExclusive)).toEqual([40]);
    expect(f.checkpoint.evaluatedThrough).toBe(40);
  });
});

describe('CompletionFollower', () => {
  function completions(fx: PartsFixture) {
    const ledger = new FakeLedger();
    const seen: { completion: Completion; offset: number }[] = [];
    const follower = new CompletionFollower({
      ...deps(fx, ledger),
      userId: 'ledgerbot',
      tracker: { onCompletion: (completion, offset) => seen.push({ completion, offset }) },
    });
    return { follower, ledger, seen };
  }

  it('follows the acting parties; a widening with a new party reopens after the last offset', async () => {
    f = partsFixture();
    const c = completions(f);
    task = c.follower.run(5, [PAYER, PAYER]);
    await f.settle();
    expect(c.ledger.completionStreams[0]?.request).toEqual({
      userId: 'ledgerbot',
      parties: [PAYER],
      beginExclusive: 5,
    });
    const checkpoint = checkpointAt(8);
    if (checkpoint.kind !== 'checkpoint') throw new Error('not a checkpoint');
    c.ledger.completionQueue.push({
      kind: 'checkpoint',
      offset: 8,
      checkpoint: checkpoint.checkpoint,
    });
    await f.settle();
    c.follower.widen([PAYER]);
    await f.settle();
    expect(c.ledger.completionStreams).toHaveLength(1);
    c.follower.widen([PAYER, ISSUER]);
    await f.settle();
    expect(
      c.ledger.completionStreams.map((s) => [s.request.parties, s.request.beginExclusive]),
    ).toEqual([
      [[PAYER], 5],
      [[ISSUER, PAYER].sort(), 8],
    ]);
  });

  it('after a refused read of pruned completions, follows from the pruning offset', async () => {
    f = partsFixture();
    const c = completions(f);
    c.ledger.prunedUpTo = 30;
    task = c.follower.run(5, [PAYER]);
    await f.settle();
    c.ledger.completionQueue.fail(apiError('PARTICIPANT_PRUNED_DATA_ACCESSED', 9, 9, 'pruned'));
    await f.settle();
    expect(c.ledger.completionStreams.map((s) => s.request.beginExclusive)).toEqual([5, 30]);
    expect(
      f.logger.lines.find((l) => l.msg.startsWith('completions pruned'))?.fields,
    ).toMatchObject({ fromOffset: 5, toOffset: 30 });
  });
});
