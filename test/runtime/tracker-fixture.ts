import { FakeClock } from '../../src/core/fake-clock.js';
import { silentLogger, type Logger } from '../../src/core/logger.js';
import { SeededRandom } from '../../src/core/seeded-random.js';
import { LedgerTransportError } from '../../src/ledger/ledger-transport-error.js';
import type { Completion, JsCommands } from '../../src/ledger/wire/wire-types.js';
import { Admission } from '../../src/runtime/admission.js';
import { BotMetrics } from '../../src/runtime/bot-metrics.js';
import type { DedupConfig } from '../../src/runtime/config/bot-config.js';
import {
  decodedJournal,
  type JournalPayload,
  type SubmissionPayload,
} from '../../src/runtime/submission-payload.js';
import { SubmissionTracker, type IntentEvent } from '../../src/runtime/submission-tracker.js';
import { TokenBucket } from '../../src/runtime/token-bucket.js';
import { openSqliteStore, type SqliteStoreOptions } from '../../src/store/open-sqlite-store.js';
import type { IntentRecord, NewIntent, Store } from '../../src/store/store.js';
import { cantonStatus, specForm } from '../ledger/status-samples.js';
import { tempDir } from '../support/temp-dir.js';
import { specValidator } from '../support/spec-validator.js';
import { FakeLedger } from './fake-ledger.js';

const openapi = specValidator('openapi-3.5');

export const PAYER = 'payer::1220abcd';
export const INVOICE_CID = '00invoice';

export function payload(overrides: Partial<SubmissionPayload> = {}): SubmissionPayload {
  return {
    version: 1,
    commands: [
      {
        ExerciseCommand: {
          templateId: '#invoices:Invoice:Invoice',
          contractId: INVOICE_CID,
          choice: 'Accept',
          choiceArgument: {},
        },
      },
    ],
    actAs: [PAYER],
    readAs: [],
    workflowId: 'accept',
    disclosedContracts: [],
    retry: { maxAttempts: 5, initialDelayMs: 1000, maxDelayMs: 8000, deadlineMs: 600_000 },
    rateLimit: { perSecond: 1000, burst: 1000 },
    concurrency: 4,
    ...overrides,
  };
}

export function newIntent(
  offset: number,
  overrides: Partial<NewIntent<SubmissionPayload>> = {},
): NewIntent<SubmissionPayload> {
  return {
    commandId: `lb-accept-${offset}`,
    userId: 'ledgerbot',
    actAs: [PAYER],
    ruleId: 'accept',
    revision: 1,
    actionIndex: 0,
    trigger: { kind: 'event', updateId: `upd-${offset}`, nodeId: 0 },
    offset,
    payload: payload(),
    event: { updateId: `upd-${offset}`, offset },
    ...overrides,
  };
}

export type TrackerFixture = {
  clock: FakeClock;
  ledger: FakeLedger;
  /** The journal as the bot reads it: payloads decoded as rows are read. */
  store: Store<JournalPayload>;
  metrics: BotMetrics;
  admission: Admission;
  tracker: SubmissionTracker;
  events: IntentEvent[];
  /** Records the intent and hands it to the tracker; its first attempt runs on `advance(0)`. */
  track(intent: NewIntent<SubmissionPayload>): Promise<IntentRecord<JournalPayload>>;
  intent(commandId: string): IntentRecord<JournalPayload>;
  cleanup(): void;
};

export function trackerFixture(
  options: {
    dedup?: DedupConfig;
    completionTimeoutMs?: number;
    start?: number;
    groupCommit?: SqliteStoreOptions['groupCommit'];
    logger?: Logger;
    maySubmit?: (ruleId: string) => boolean;
  } = {},
): TrackerFixture {
  const clock = new FakeClock(options.start ?? Date.UTC(2026, 0, 5, 9));
  const random = new SeededRandom(7);
  const ledger = new FakeLedger();
  const temp = tempDir();
  const store = decodedJournal(
    openSqliteStore({
      dir: temp.dir,
      clock,
      ...(options.groupCommit === undefined ? {} : { groupCommit: options.groupCommit }),
    }),
  );
  const metrics = new BotMetrics();
  const admission = new Admission(10);
  const events: IntentEvent[] = [];
  const buckets = new Map<string, TokenBucket>();
  const tracker = new SubmissionTracker({
    ledger,
    store,
    clock,
    random,
    logger: options.logger ?? silentLogger,
    userId: 'ledgerbot',
    completionTimeoutMs: options.completionTimeoutMs ?? 5_000,
    dedup: options.dedup ?? { mode: 'offset', fallbackMs: 60_000 },
    metrics,
    rateLimiter: (ruleId, p) => {
      let b = buckets.get(ruleId);
      if (b === undefined) {
        b = new TokenBucket(clock, p.rateLimit.perSecond, p.rateLimit.burst);
        buckets.set(ruleId, b);
      }
      return b;
    },
    ...(options.maySubmit === undefined ? {} : { maySubmit: options.maySubmit }),
    onIntent: (e) => events.push(e),
  });
  return {
    clock,
    ledger,
    store,
    metrics,
    admission,
    tracker,
    events,
    track: async (intent) => {
      const [record] = store.recordIntents([intent]).inserted;
      if (record === undefined) throw new Error('intent already recorded');
      const permit = await admission.acquire(record.ruleId, 4);
      tracker.track(record, permit);
      return record;
    },
    intent: (commandId) => {
      const r = store.getIntent(commandId);
      if (r === undefined) throw new Error(`no intent ${commandId}`);
      return r;
    },
    cleanup: () => {
      tracker.close();
      store.close();
      temp.cleanup();
    },
  };
}

/** The completion of one submission: success, or the given failed status (spec-valid). */
export function completionOf(
  submitted: JsCommands,
  offset: number,
  failure?: Parameters<typeof cantonStatus>[0],
  overrides: Partial<Completion> = {},
): Completion {
  const c = {
    commandId: submitted.commandId,
    userId: submitted.userId ?? 'ledgerbot',
    actAs: submitted.actAs,
    ...(submitted.submissionId === undefined ? {} : { submissionId: submitted.submissionId }),
    offset,
    synchronizerTime: { synchronizerId: 'sync::1220ef', recordTime: '2026-01-05T09:00:00Z' },
    ...(failure === undefined
      ? { updateId: `tx-${offset}`, status: { code: 0, message: '', details: [] } }
      : { status: specForm(cantonStatus(failure)) }),
    ...overrides,
  } as Completion;
  openapi.assert('Completion1', c);
  // What the wire really carries: Canton adds the decoded details, which the parser reads.
  return failure === undefined
    ? c
    : ({ ...c, status: cantonStatus(failure) } as unknown as Completion);
}

export const lostResponse = (): never => {
  throw new LedgerTransportError('reset', 'POST /v2/commands/async/submit', 'socket hang up');
};
