import { afterEach, describe, expect, it } from 'vitest';
import { AbortError } from '../../src/core/abort-error.js';
import type { BotState } from '../../src/runtime/bot-events.js';
import type { UpdateEvaluation } from '../../src/runtime/evaluate-update.js';
import type { IntentPipeline } from '../../src/runtime/intent-pipeline.js';
import { RuleControl } from '../../src/runtime/rule-control.js';
import { TransactionIngest } from '../../src/runtime/transaction-ingest.js';
import { ACCEPT_RULES, checkpointAt, invoiceCreated, PARTIES, rules } from './bot-fixture.js';
import { FakeLedger } from './fake-ledger.js';
import { partsFixture, type PartsFixture } from './parts-fixture.js';

const TWO_RULES = `${ACCEPT_RULES}  - id: remind
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    then:
      - exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Remind }
        actAs: [payer]
  - id: off
    enabled: false
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    then:
      - exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Remind }
        actAs: [payer]
`;

let f: PartsFixture | undefined;
let stop: AbortController | undefined;
afterEach(() => {
  stop?.abort(new AbortError('test over'));
  f?.cleanup();
  f = undefined;
});

/** Rule control over the fixture's parts; the pipeline records what it is handed. */
function control(fx: PartsFixture) {
  let state: BotState = 'running';
  const ledger = new FakeLedger();
  const submitted: { evaluation: UpdateEvaluation; live: boolean }[] = [];
  const pipeline = {
    submitEvent: (evaluation: UpdateEvaluation, live: boolean) => {
      submitted.push({ evaluation, live });
      return Promise.resolve({ inserted: evaluation.intents.length, existing: 0 });
    },
  } as unknown as IntentPipeline;
  const failures: unknown[] = [];
  stop = new AbortController();
  const c = new RuleControl({
    book: fx.book,
    checkpoint: fx.checkpoint,
    state: () => state,
    ledger,
    parties: PARTIES,
    ingest: new TransactionIngest({
      parties: PARTIES,
      clock: fx.clock,
      metrics: fx.metrics,
      logger: fx.logger,
      events: fx.events,
      pipeline,
    }),
    signal: stop.signal,
    clock: fx.clock,
    random: fx.random,
    restartBackoff: { initialMs: 1_000, maxMs: 1_000 },
    streamBackoff: undefined,
    logger: fx.logger,
    events: fx.events,
    fail: (err) => failures.push(err),
  });
  return { c, ledger, submitted, failures, setState: (s: BotState) => (state = s) };
}

describe('RuleControl', () => {
  it('pauses a rule: the live index leaves it out and the checkpoint holds where it was', () => {
    f = partsFixture({ rules: rules(TWO_RULES) });
    const { c } = control(f);
    f.checkpoint.evaluatedThrough = 10;
    const status = c.pause('remind');
    expect(status).toMatchObject({ id: 'remind', state: 'paused', pausedAtOffset: 10 });
    expect(status.pausedAt).toBe(f.clock.now());
    expect(f.book.liveRules().map((r) => r.id)).toEqual(['accept', 'off']);
    expect(f.book.heldAt()).toBe(10);
    f.checkpoint.advance(20);
    expect(f.store.checkpoint()).toBe(10);
    // Idempotent: the pause keeps its offset.
    f.checkpoint.evaluatedThrough = 15;
    expect(c.pause('remind').pausedAtOffset).toBe(10);
    expect(f.logger.lines.filter((l) => l.msg === 'rule paused')).toHaveLength(1);
  });

  it('refuses unknown and disabled rules, and any change while the bot is not running', () => {
    f = partsFixture({ rules: rules(TWO_RULES) });
    const { c, setState } = control(f);
    expect(() => c.pause('nope')).toThrow(expect.objectContaining({ code: 'UNKNOWN_RULE' }));
    expect(() => c.pause('off')).toThrow(expect.objectContaining({ code: 'RULE_DISABLED' }));
    setState('starting');
    expect(() => c.resume('remind')).toThrow(expect.objectContaining({ code: 'NOT_RUNNING' }));
  });

  it('resumes: the rule is live again at once, its paused events are read again for it alone, then the hold ends', async () => {
    f = partsFixture({ rules: rules(TWO_RULES) });
    const { c, ledger, submitted } = control(f);
    const resumed: string[] = [];
    f.events.on('resumed', (id) => resumed.push(id));
    f.checkpoint.evaluatedThrough = 10;
    c.pause('remind');
    f.checkpoint.evaluatedThrough = 14;
    f.checkpoint.lastProcessed = 14;
    expect(c.resume('remind')).toMatchObject({ state: 'resuming', pausedAtOffset: 10 });
    expect(f.book.liveRules().map((r) => r.id)).toEqual(['accept', 'remind', 'off']);
    // A second pause must wait for the replay.
    expect(() => c.pause('remind')).toThrow(expect.objectContaining({ code: 'RULE_RESUMING' }));
    expect(c.resume('remind').state).toBe('resuming');
    await f.settle();
    const [replay] = ledger.updateStreams;
    expect(replay?.request).toMatchObject({ beginExclusive: 10, endInclusive: 14 });
    replay!.queue.push(invoiceCreated(12), checkpointAt(13), invoiceCreated(14));
    replay!.queue.end();
    await c.settled();
    // Evaluated for `remind` only, below the live stream (not live).
    expect(submitted.map((s) => [s.evaluation.offset, s.live])).toEqual([
      [12, false],
      [14, false],
    ]);
    expect(submitted.flatMap((s) => s.evaluation.intents.map((i) => i.ruleId))).toEqual([
      'remind',
      'remind',
    ]);
    expect(c.resume('remind').state).toBe('active');
    expect(resumed).toEqual(['remind']);
    expect(f.book.heldAt()).toBeUndefined();
    expect(f.store.checkpoint()).toBe(14);
  });

  it('retries a failed replay with backoff; a stop leaves the rule resuming (the hold stays)', async () => {
    f = partsFixture({ rules: rules(TWO_RULES) });
    const { c, ledger, failures } = control(f);
    f.checkpoint.evaluatedThrough = 10;
    c.pause('remind');
    f.checkpoint.evaluatedThrough = 14;
    ledger.updatesErrors.push(new Error('socket closed'));
    c.resume('remind');
    await f.settle();
    expect(ledger.updateStreams).toHaveLength(1);
    expect(
      f.logger.lines.find((l) => l.msg === 'rule replay failed; retrying')?.fields,
    ).toMatchObject({ ruleId: 'remind', fromOffset: 10, toOffset: 14 });
    await f.clock.advance(1_000);
    expect(ledger.updateStreams).toHaveLength(2);
    stop!.abort(new AbortError('stopping'));
    await c.settled();
    expect(failures).toEqual([]);
    expect(f.book.statusOf(f.book.find('remind')!).state).toBe('resuming');
    expect(f.book.heldAt()).toBe(10);
  });
});
