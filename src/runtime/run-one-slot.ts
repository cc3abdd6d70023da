import { AbortError } from '../core/abort-error.js';
import type { Logger } from '../core/logger.js';
import type { CompiledRule } from '../rules/compiled-rule.js';
import type { Intent } from '../rules/evaluation-result.js';
import { runSlot, type SlotRunResult, type SlotSnapshotSource } from '../schedule/run-slot.js';
import { isTerminal, type IntentRecord, type Store } from '../store/store.js';
import { BotMetrics } from './bot-metrics.js';
import type { BotOptions } from './bot-options.js';
import { Checkpoint } from './checkpoint.js';
import { runCleanupSteps } from './cleanup-steps.js';
import { compileBotOptions, type CompiledBotOptions } from './compile-bot-options.js';
import { completionsStart } from './completions-start.js';
import { journalSide, type JournalSide } from './journal-side.js';
import { ledgerSlotSource } from './ledger-slot-source.js';
import { RuntimeError } from './runtime-error.js';
import { decodedJournal, type JournalPayload } from './submission-payload.js';
import { planSubscription } from './subscription-plan.js';
import { TerminalWatch } from './terminal-watch.js';
import { RateLimits } from './token-bucket.js';

export type RunOneSlotOptions = Pick<
  BotOptions,
  | 'parties'
  | 'packageNameOf'
  | 'userId'
  | 'ledger'
  | 'store'
  | 'submission'
  | 'stopGraceMs'
  | 'restartBackoff'
  | 'streamBackoff'
  | 'clock'
  | 'random'
  | 'logger'
> & {
  /** A schedule rule. */
  readonly rule: CompiledRule;
  /** The slot time, epoch ms (`previousSlot` of the rule's cron). */
  readonly slot: number;
  /**
   * How long to wait, once the slot's intents are recorded, for every one of them to be
   * terminal, in ms. Those still open then stay open in the journal, and the next start of a bot
   * on the store resumes them.
   */
  readonly timeoutMs: number;
  /**
   * Close the store at the end.
   * @default false
   */
  readonly closeStore?: boolean;
  /** @default the active contracts of `ledger` (ledgerSlotSource) */
  readonly source?: SlotSnapshotSource;
  /** The slot's intents of one batch, before they are recorded (the CLI prints them). */
  readonly onIntents?: (intents: readonly Intent[]) => void;
  /** The slot was run and its intents recorded; the wait for their outcomes begins. */
  readonly onRecorded?: (result: SlotRunResult) => void;
  /** Cancels the slot and the wait: `runOneSlot` stops everything and rejects with AbortError. */
  readonly signal?: AbortSignal;
};

export type OneSlotRun = {
  readonly result: SlotRunResult;
  /** The slot's intents, as evaluated. */
  readonly intents: readonly Intent[];
  /** The journal's record of each of them (one per commandId) once everything stopped. */
  readonly outcomes: readonly IntentRecord[];
  /** Whether every intent was terminal before the timeout. */
  readonly settled: boolean;
};

/**
 * Runs one slot of a schedule rule with only the parts a slot needs, for `ledgerbot run-slot`
 * when no bot runs: the slot's snapshot and evaluation (`runSlot`, which marks the slot begun and
 * completed in the store), the journal pipeline (recorded, then admitted: the same commandIds,
 * the same dedup, and a bot started later resumes whatever is still open), the submission
 * tracker, and a completions stream that settles it. It waits until the slot's intents are
 * terminal or `timeoutMs` passed, then stops in order: intake, the tracker's drain, the
 * completions stream, the tracker. No updates stream, no journal compaction (`journalSide` builds
 * the compactor; nothing starts it), and the checkpoint does not move.
 *
 * Throws RuntimeError UNKNOWN_PARTY (before any I/O) when a party alias has no id, whatever
 * `runSlot` throws, and RuntimeError STREAM_FAILED when the completions stream fails.
 */
export async function runOneSlot(options: RunOneSlotOptions): Promise<OneSlotRun> {
  const { rule, slot, timeoutMs, closeStore, source, onIntents, onRecorded, signal, ...bot } =
    options;
  const o = compileBotOptions({
    ...bot,
    rules: { rules: [rule], warnings: [] },
    closeStore: closeStore ?? false,
    schedule: { drive: false },
  });
  const logger = o.logger.child({ component: 'runtime' });
  try {
    return await runAndStop(o, logger, {
      rule,
      slot,
      timeoutMs,
      source,
      onIntents,
      onRecorded,
      signal,
    });
  } finally {
    await runCleanupSteps(
      [
        {
          name: 'store',
          run: () => {
            if (o.closeStore) o.store.close();
          },
        },
      ],
      logger,
    );
  }
}

/** Everything but closing the store (see `runOneSlot`). */
async function runAndStop(
  o: CompiledBotOptions,
  logger: Logger,
  r: SlotRequest,
): Promise<OneSlotRun> {
  const { rule, slot, signal } = r;
  const journal = decodedJournal(o.store);
  const plan = planSubscription(o.rules, o.parties);
  const watch = new TerminalWatch();
  const intake = new AbortController();
  const completionsStop = new AbortController();
  const side = journalSide({
    options: o,
    journal,
    clock: o.clock,
    logger,
    metrics: new BotMetrics(),
    // The checkpoint is the updates stream's, which this does not follow: nothing moves it.
    checkpoint: new Checkpoint({ store: journal, writes: false, logger, heldAt: () => undefined }),
    rateLimits: new RateLimits(o.clock, (id) =>
      id === rule.id ? rule.options.rateLimit : undefined,
    ),
    intake: intake.signal,
    completionsStop: completionsStop.signal,
    onIntent: (event) => watch.note(event),
    assertRunning: (action) => {
      throw new RuntimeError('NOT_RUNNING', `no bot runs; ${action}`);
    },
  });
  let completionsTask: Promise<void> | undefined;
  let run: Omit<OneSlotRun, 'outcomes'>;
  try {
    const ledgerEnd = await o.ledger.ledgerEnd(signal === undefined ? {} : { signal });
    // The slot's intents of an earlier run are among these: their completions may come earlier.
    const open = journal.openIntents().filter((i) => i.ruleId === rule.id);
    const start = completionsStart(ledgerEnd, open, plan.actAsParties);
    completionsTask = side.completions
      .run(start.begin, start.parties)
      .catch((err: unknown) => watch.fail(err));
    run = await slotAndWait(o, journal, side, watch, r);
  } finally {
    await runCleanupSteps(
      [
        { name: 'intake', run: () => intake.abort(new AbortError('the slot run is stopping')) },
        { name: 'drain', run: () => side.tracker.drain(o.stopGraceMs) },
        {
          name: 'completions',
          run: () => {
            completionsStop.abort(new AbortError('the slot run is stopping'));
            return completionsTask;
          },
        },
        { name: 'tracker', run: () => side.tracker.close() },
      ],
      logger,
    );
  }
  const ids = new Set(run.intents.map((i) => i.commandId));
  const outcomes = [...ids].flatMap((id) => journal.getIntent(id) ?? []);
  logger.info(
    {
      ruleId: rule.id,
      slot,
      snapshotOffset: run.result.snapshotOffset,
      intents: ids.size,
      open: outcomes.filter((i) => !isTerminal(i.state)).length,
      settled: run.settled,
    },
    'slot run',
  );
  return { ...run, outcomes };
}

type SlotRequest = {
  readonly rule: CompiledRule;
  readonly slot: number;
  readonly timeoutMs: number;
  readonly source: SlotSnapshotSource | undefined;
  readonly onIntents: ((intents: readonly Intent[]) => void) | undefined;
  readonly onRecorded: ((result: SlotRunResult) => void) | undefined;
  readonly signal: AbortSignal | undefined;
};

/** Runs the slot into the pipeline, then waits for its intents (see `runOneSlot`). */
async function slotAndWait(
  o: CompiledBotOptions,
  journal: Store<JournalPayload>,
  side: JournalSide,
  watch: TerminalWatch,
  r: SlotRequest,
): Promise<Omit<OneSlotRun, 'outcomes'>> {
  const intents: Intent[] = [];
  const result = await runSlot(r.rule, r.slot, {
    source: r.source ?? ledgerSlotSource(o.ledger),
    sink: {
      submitIntents: async (batch, context) => {
        r.onIntents?.(batch);
        intents.push(...batch);
        await side.pipeline.submitIntents(batch, context);
      },
    },
    journal,
    parties: o.parties,
    ...(o.packageNameOf === undefined ? {} : { packageNameOf: o.packageNameOf }),
    ...(r.signal === undefined ? {} : { signal: r.signal }),
  });
  r.onRecorded?.(result);
  const open = intents
    .map((i) => i.commandId)
    .filter((id) => {
      const record = journal.getIntent(id);
      return record === undefined || !isTerminal(record.state);
    });
  const settled = await watch.until(open, {
    clock: o.clock,
    timeoutMs: r.timeoutMs,
    signal: r.signal,
  });
  return { result, intents, settled };
}
