import { EventEmitter } from 'node:events';
import { FakeClock } from '../../src/core/fake-clock.js';
import { SeededRandom } from '../../src/core/seeded-random.js';
import type { UpdateElement } from '../../src/ledger/ws/update-stream.js';
import type { RuleSet } from '../../src/rules/compiled-rule.js';
import type { Permit } from '../../src/runtime/admission.js';
import type { BotEventMap, BotEvents } from '../../src/runtime/bot-events.js';
import { BotMetrics } from '../../src/runtime/bot-metrics.js';
import { Checkpoint } from '../../src/runtime/checkpoint.js';
import { evaluateUpdate, type UpdateEvaluation } from '../../src/runtime/evaluate-update.js';
import { RuleBook } from '../../src/runtime/rule-book.js';
import type { JournalPayload } from '../../src/runtime/submission-payload.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import type { IntentRecord, Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';
import { PARTIES, recordingLogger, rules } from './bot-fixture.js';

/**
 * The parts of a bot the pipeline, rule control and the followers work with, on a FakeClock and
 * a SQLite store in a temp directory, for unit tests of one part at a time.
 */
export type PartsFixture = {
  readonly clock: FakeClock;
  readonly random: SeededRandom;
  readonly store: Store;
  readonly metrics: BotMetrics;
  readonly logger: ReturnType<typeof recordingLogger>;
  readonly events: BotEvents;
  readonly book: RuleBook;
  readonly checkpoint: Checkpoint;
  /** Lets promise callbacks and timers due now run. */
  settle(): Promise<void>;
  cleanup(): void;
};

export function partsFixture(options: { rules?: RuleSet; writes?: boolean } = {}): PartsFixture {
  const clock = new FakeClock(Date.UTC(2026, 0, 5, 9));
  const temp = tempDir();
  const store = openSqliteStore({ dir: temp.dir, clock });
  const logger = recordingLogger();
  const book = new RuleBook(options.rules ?? rules(), PARTIES);
  const checkpoint = new Checkpoint({
    store,
    writes: options.writes ?? true,
    logger,
    heldAt: () => book.heldAt(),
  });
  return {
    clock,
    random: new SeededRandom(7),
    store,
    metrics: new BotMetrics(),
    logger,
    events: new EventEmitter<BotEventMap>(),
    book,
    checkpoint,
    settle: async () => {
      for (let i = 0; i < 5; i++) await clock.advance(0);
    },
    cleanup: () => {
      try {
        store.close();
      } catch {
        // closed by the test
      }
      temp.cleanup();
    },
  };
}

/** An element of the updates stream evaluated with the fixture's live rules. */
export function evaluated(f: PartsFixture, element: UpdateElement, live = true): UpdateEvaluation {
  if (element.kind !== 'transaction') throw new Error('not a transaction');
  return evaluateUpdate(element.transaction, element.offset, {
    index: f.book.index,
    parties: PARTIES,
    now: f.clock.now(),
    metrics: f.metrics,
    live,
  });
}

/** A tracker that only takes intents in (what the pipeline hands over, and the permits). */
export class FakeTracker {
  readonly tracked = new Map<string, { record: IntentRecord<JournalPayload>; permit: Permit }>();

  has(commandId: string): boolean {
    return this.tracked.has(commandId);
  }

  track(record: IntentRecord<JournalPayload>, permit: Permit): void {
    this.tracked.set(record.commandId, { record, permit });
  }

  /** The intent is terminal: its place is free again. */
  finish(commandId: string): void {
    this.tracked.get(commandId)?.permit.release();
    this.tracked.delete(commandId);
  }
}
