import { AbortError } from '../core/abort-error.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Intent } from '../rules/evaluation-result.js';
import type { SlotSubmitContext } from '../schedule/run-slot.js';
import {
  isTerminal,
  type IntentRecord,
  type IntentState,
  type NewIntent,
  type Store,
} from '../store/store.js';
import type { Admission, Permit } from './admission.js';
import type { BotMetrics } from './bot-metrics.js';
import type { Checkpoint } from './checkpoint.js';
import { errorFields } from './error-record.js';
import type { UpdateEvaluation } from './evaluate-update.js';
import { intentFields, logIntent } from './intent-log.js';
import { journalEntriesOf, slotIntentOf } from './journal-entry.js';
import { RuntimeError } from './runtime-error.js';
import { storedLimits } from './stored-payload.js';
import type { JournalPayload, SubmissionPayload } from './submission-payload.js';
import type { IntentEvent, SubmissionTracker } from './submission-tracker.js';

/** How many intents of the journal one `resumeOpen` page reads. */
const RESUME_PAGE = 256;

export type RecordedCounts = {
  /** Intents new to the journal. */
  readonly inserted: number;
  /** Intents the journal had already (a replay). */
  readonly existing: number;
};

const NOTHING: RecordedCounts = { inserted: 0, existing: 0 };

/**
 * Where intents go once evaluated: the single path of event rules, schedule slots and dead-letter
 * retries. The journal pipeline records them (write-ahead), then admits them to the submission
 * tracker; the shadow pipeline logs them and writes and submits nothing.
 */
export interface IntentPipeline {
  /**
   * The intents of one evaluated transaction. `live`: an element of the updates stream, whose
   * offset is declared processed in the batch that records them. Resolves once they are recorded
   * and admitted.
   */
  submitEvent(evaluation: UpdateEvaluation, live: boolean): Promise<RecordedCounts>;
  /** The intents of a schedule slot (see `Bot.submitIntents`). */
  submitIntents(intents: readonly Intent[], context: SlotSubmitContext): Promise<void>;
  /** An operator's retry of a dead letter (see `Bot.retryDeadLetter`). */
  retryDeadLetter(commandId: string): IntentRecord;
  /** The journal's open intents, from earlier runs. */
  openIntents(): readonly IntentRecord[];
  /** Hands the journal's open intents to the tracker, oldest first. */
  resumeOpen(): Promise<void>;
}

export type JournalPipelineDeps = {
  /** The journal, its payloads decoded as rows are read (`decodedJournal`). */
  readonly store: Store<JournalPayload>;
  readonly checkpoint: Checkpoint;
  readonly admission: Admission;
  readonly tracker: Pick<SubmissionTracker, 'has' | 'track'>;
  readonly clock: Clock;
  readonly metrics: BotMetrics;
  readonly logger: Logger;
  readonly userId: string;
  /** Intake: aborting it ends every wait for admission. */
  readonly intake: AbortSignal;
  /** Every intent state change the pipeline makes. */
  readonly onIntent: (event: IntentEvent) => void;
  /** Throws unless the bot runs (a dead-letter retry needs the running bot). */
  readonly assertRunning: (action: string) => void;
};

/** Records intents in the journal, then admits them (see IntentPipeline). */
export class JournalPipeline implements IntentPipeline {
  readonly #d: JournalPipelineDeps;

  constructor(deps: JournalPipelineDeps) {
    this.#d = deps;
  }

  async submitEvent(evaluation: UpdateEvaluation, live: boolean): Promise<RecordedCounts> {
    if (evaluation.intents.length === 0) {
      if (live) this.#d.checkpoint.advance(evaluation.offset);
      return NOTHING;
    }
    return this.#recordAndAdmit(journalEntriesOf(evaluation, this.#d.clock.now(), this.#d.userId), {
      ...(live ? { processed: evaluation.offset } : {}),
      eventMs: evaluation.recordMs,
      placeFirst: true,
    });
  }

  async submitIntents(intents: readonly Intent[], context: SlotSubmitContext): Promise<void> {
    if (intents.length === 0) return;
    const now = this.#d.clock.now();
    await this.#recordAndAdmit(
      intents.map((i) => slotIntentOf(i, context, now, this.#d.userId)),
      context.signal === undefined ? {} : { signal: context.signal },
    );
  }

  retryDeadLetter(commandId: string): IntentRecord {
    this.#d.assertRunning('a retry needs the running bot');
    const { store } = this.#d;
    const dead = store.getDeadLetter(commandId);
    if (dead === undefined) {
      throw new RuntimeError('NOT_DEAD_LETTERED', `no dead letter with commandId "${commandId}"`);
    }
    const { deadlineMs } = storedLimits(dead.intent.payload);
    const record = store.batch(() =>
      store.requeueDeadLetter(
        commandId,
        deadlineMs === undefined ? {} : { deadline: this.#d.clock.now() + deadlineMs },
      ),
    );
    this.#d.logger.info({ ...intentFields(record) }, 'dead letter requeued');
    this.#announce(record, 'dead-lettered');
    // Admission may wait for a place; the caller gets the requeued record at once.
    void this.#admit(record).catch((err: unknown) => {
      if (!(err instanceof AbortError)) {
        this.#d.logger.warn({ commandId, ...errorFields(err) }, 'cannot admit the requeued intent');
      }
    });
    return record;
  }

  openIntents(): readonly IntentRecord[] {
    return this.#d.store.openIntents();
  }

  async resumeOpen(): Promise<void> {
    const seen = new Set<string>();
    let resumed = 0;
    for (;;) {
      const open = this.#d.store
        .openIntents({ limit: RESUME_PAGE })
        .filter((r) => !seen.has(r.commandId) && !this.#d.tracker.has(r.commandId));
      if (open.length === 0) break;
      for (const record of open) {
        seen.add(record.commandId);
        await this.#admit(record);
        resumed += 1;
      }
    }
    if (resumed > 0) this.#d.logger.info({ intents: resumed }, 'resumed open intents');
  }

  /**
   * Records `entries` in one batch (with `processed`, the checkpoint candidate: write-ahead, they
   * commit together, before any submission), then admits the new ones and those the journal has
   * open but nobody works on. `eventMs`: the triggering event's time, for the latency metrics.
   *
   * `placeFirst` (an event's intents): the first intent's place is taken before the batch, so a
   * bot at its bound records an event's intent in the turn its first attempt starts, and the
   * journal writes the recording and the `submitted` change as one log row instead of two. The
   * order is still record, then submit; an event waiting for a place is not recorded yet, and
   * the checkpoint has not passed it, so a restart reads it again.
   */
  async #recordAndAdmit(
    entries: readonly NewIntent<SubmissionPayload>[],
    options: { processed?: number; eventMs?: number; signal?: AbortSignal; placeFirst?: boolean },
  ): Promise<RecordedCounts> {
    const { store, metrics, checkpoint } = this.#d;
    const first = entries[0];
    // Before the look-up, so that no wait for a place comes between it and the recording.
    const place =
      options.placeFirst === true && first !== undefined
        ? await this.#place(first.ruleId, first.payload, options.signal)
        : undefined;
    let recorded;
    try {
      // A PostgreSQL journal reads first what memory may have dropped (a completed slot run
      // again, an event below the checkpoint), so those are found and not sent again.
      const lookUp = store.lookUpIntents?.(entries);
      if (lookUp !== undefined) await lookUp;
      recorded = store.batch(() => {
        const r = store.recordIntents(entries);
        if (options.processed !== undefined) checkpoint.advanceInBatch(options.processed);
        return r;
      });
    } catch (err) {
      place?.release();
      throw err;
    }
    for (const record of recorded.inserted) {
      metrics.countRecorded(record.ruleId);
      if (options.eventMs !== undefined) metrics.noteEventTime(record.commandId, options.eventMs);
      this.#announce(record, null);
    }
    for (const record of recorded.existing) {
      if (options.eventMs !== undefined && !isTerminal(record.state)) {
        metrics.noteEventTime(record.commandId, options.eventMs);
      }
      this.#d.logger.debug({ ...intentFields(record), state: record.state }, 'intent known');
    }
    const toRun = [
      ...recorded.inserted,
      ...recorded.existing.filter((r) => !isTerminal(r.state) && !this.#d.tracker.has(r.commandId)),
    ];
    // The placed intent goes first: another one's wait for a place must not hold it up.
    const placed =
      place === undefined ? -1 : toRun.findIndex((r) => r.commandId === first?.commandId);
    if (placed >= 0) {
      this.#d.tracker.track(toRun[placed]!, place!);
    } else {
      // The first intent needs no place after all (the journal had it, finished or worked on).
      place?.release();
    }
    for (let i = 0; i < toRun.length; i++) {
      if (i !== placed) await this.#admit(toRun[i]!, options.signal);
    }
    return { inserted: recorded.inserted.length, existing: recorded.existing.length };
  }

  /** A record that became `pending` (new, or requeued): counted, logged and emitted. */
  #announce(record: IntentRecord, from: IntentState | null): void {
    this.#d.metrics.countTransition('pending', record.ruleId, null);
    if (from === null) logIntent(this.#d.logger, record, null);
    this.#d.onIntent({
      commandId: record.commandId,
      ruleId: record.ruleId,
      from,
      to: 'pending',
      record,
    });
  }

  /** Waits for a place (this is where ingestion pauses), then hands the intent over. */
  async #admit(record: IntentRecord<JournalPayload>, signal?: AbortSignal): Promise<void> {
    this.#d.tracker.track(record, await this.#place(record.ruleId, record.payload, signal));
  }

  /** A place among the intents worked on, for an intent of `ruleId` with `payload`'s limits. */
  async #place(
    ruleId: string,
    payload: SubmissionPayload | JournalPayload,
    signal: AbortSignal | undefined,
  ): Promise<Permit> {
    const { metrics, intake } = this.#d;
    metrics.waitingForAdmission += 1;
    try {
      return await this.#d.admission.acquire(
        ruleId,
        storedLimits(payload).concurrency,
        signal === undefined ? intake : AbortSignal.any([intake, signal]),
      );
    } finally {
      metrics.waitingForAdmission -= 1;
    }
  }
}
