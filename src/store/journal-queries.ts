import type {
  AttemptRecord,
  DeadLetter,
  IntentQuery,
  IntentRecord,
  IntentState,
  SlotRecord,
} from './store.js';

/**
 * The operator's reads of the journal: the ops API, the console and the CLI. Asynchronous, unlike
 * the `Store` the runtime's hot path uses, because for a shared store (PostgreSQL) they are
 * queries over the whole journal, folded rows and, in a fleet, other instances' intents, which no
 * instance holds in memory. The SQLite store answers them from its own synchronous reads.
 */
export interface JournalQueries<P = unknown> {
  getIntent(commandId: string): Promise<IntentRecord<P> | undefined>;
  listIntents(query?: IntentQuery): Promise<IntentRecord<P>[]>;
  /** See `Store.getAttempts`. */
  getAttempts(commandId: string): Promise<AttemptRecord[] | undefined>;
  /** See `Store.getRecordedEvent`. */
  getRecordedEvent(commandId: string): Promise<unknown>;
  countByState(): Promise<Record<IntentState, number>>;
  listDeadLetters(options?: {
    readonly limit?: number;
    readonly ruleId?: string;
  }): Promise<DeadLetter<P>[]>;
  getDeadLetter(commandId: string): Promise<DeadLetter<P> | undefined>;
  listSlotRecords(): Promise<SlotRecord[]>;
}
