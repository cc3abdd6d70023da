import type {
  AttemptRecord,
  DeadLetter,
  IntentChange,
  IntentQuery,
  IntentRecord,
  IntentState,
  NewIntent,
  RecordIntentsResult,
  SlotRecord,
  Store,
} from './store.js';

/**
 * Turns the JSON a store parsed from a row into the payload type its user works with. It should
 * not throw: a row it cannot use is better returned as a typed error value (the runtime
 * dead-letters such an intent and goes on with the others).
 */
export type PayloadDecoder<P> = (stored: unknown) => P;

/**
 * A view of `store` whose records carry decoded payloads: each payload is checked once, as its
 * row is read (or once per intent, while the store keeps handing out the same payload), so the
 * code behind this edge reads payload fields without checking them again. Works over any Store
 * (a library user hands the bot one of their own); writes go through as they are, since the
 * payload is JSON on disk either way.
 */
export function decodingStore<P>(store: Store, decode: PayloadDecoder<P>): Store<P> {
  return new DecodingStore(store, decode);
}

class DecodingStore<P> implements Store<P> {
  readonly #store: Store;
  readonly #decode: PayloadDecoder<P>;
  /**
   * Decoded payloads by the stored payload object: the SQLite store hands out one frozen
   * payload object per intent for as long as it keeps the intent in memory, so a transition
   * does not decode it again. A store that makes a new object per read simply misses.
   */
  readonly #decoded = new WeakMap<object, P>();

  /** Only where the store has it: the compactor takes its presence as the store's choice. */
  readonly compactAsync?: (olderThanMs: number) => Promise<number>;

  constructor(store: Store, decode: PayloadDecoder<P>) {
    this.#store = store;
    this.#decode = decode;
    const compactAsync = store.compactAsync?.bind(store);
    if (compactAsync !== undefined) this.compactAsync = compactAsync;
  }

  batch<T>(fn: () => T): T {
    return this.#store.batch(fn);
  }

  sync(): Promise<void> {
    return this.#store.sync();
  }

  flush(): void {
    this.#store.flush();
  }

  checkpoint(): number | undefined {
    return this.#store.checkpoint();
  }

  advanceCheckpoint(processedOffset: number): void {
    this.#store.advanceCheckpoint(processedOffset);
  }

  resetCheckpoint(offset: number): void {
    this.#store.resetCheckpoint(offset);
  }

  recordIntents(intents: readonly NewIntent<P>[]): RecordIntentsResult<P> {
    const result = this.#store.recordIntents(intents);
    return {
      inserted: result.inserted.map((r) => this.#record(r)),
      existing: result.existing.map((r) => this.#record(r)),
    };
  }

  lookUpIntents(intents: readonly NewIntent<P>[]): Promise<void> | undefined {
    return this.#store.lookUpIntents?.(intents);
  }

  transition(commandId: string, change: IntentChange): IntentRecord<P> {
    return this.#record(this.#store.transition(commandId, change));
  }

  getAttempts(commandId: string): AttemptRecord[] | undefined {
    return this.#store.getAttempts(commandId);
  }

  getRecordedEvent(commandId: string): unknown {
    return this.#store.getRecordedEvent(commandId);
  }

  getIntent(commandId: string): IntentRecord<P> | undefined {
    const record = this.#store.getIntent(commandId);
    return record === undefined ? undefined : this.#record(record);
  }

  hasEventIntent(ruleId: string, offset: number, nodeId: number): boolean {
    return this.#store.hasEventIntent(ruleId, offset, nodeId);
  }

  hasEventIntentAsync(ruleId: string, offset: number, nodeId: number): Promise<boolean> {
    const store = this.#store;
    if (store.hasEventIntentAsync !== undefined) {
      return store.hasEventIntentAsync(ruleId, offset, nodeId);
    }
    return new Promise((resolve) => resolve(store.hasEventIntent(ruleId, offset, nodeId)));
  }

  openIntents(options?: { readonly limit?: number }): IntentRecord<P>[] {
    return this.#store.openIntents(options).map((r) => this.#record(r));
  }

  listIntents(query?: IntentQuery): IntentRecord<P>[] {
    return this.#store.listIntents(query).map((r) => this.#record(r));
  }

  countByState(): Record<IntentState, number> {
    return this.#store.countByState();
  }

  listDeadLetters(options?: {
    readonly limit?: number;
    readonly ruleId?: string;
  }): DeadLetter<P>[] {
    return this.#store.listDeadLetters(options).map((d) => this.#deadLetter(d));
  }

  getDeadLetter(commandId: string): DeadLetter<P> | undefined {
    const dead = this.#store.getDeadLetter(commandId);
    return dead === undefined ? undefined : this.#deadLetter(dead);
  }

  requeueDeadLetter(commandId: string, options?: { readonly deadline?: number }): IntentRecord<P> {
    return this.#record(this.#store.requeueDeadLetter(commandId, options));
  }

  purgeDeadLetter(commandId: string): boolean {
    return this.#store.purgeDeadLetter(commandId);
  }

  getSlotRecord(ruleId: string): SlotRecord | undefined {
    return this.#store.getSlotRecord(ruleId);
  }

  listSlotRecords(): SlotRecord[] {
    return this.#store.listSlotRecords();
  }

  beginSlot(ruleId: string, slot: number, snapshotOffset?: number): SlotRecord {
    return this.#store.beginSlot(ruleId, slot, snapshotOffset);
  }

  completeSlot(ruleId: string, slot: number): SlotRecord {
    return this.#store.completeSlot(ruleId, slot);
  }

  compact(olderThanMs: number): number {
    return this.#store.compact(olderThanMs);
  }

  close(): void {
    this.#store.close();
  }

  #record(record: IntentRecord): IntentRecord<P> {
    return { ...record, payload: this.#payload(record.payload) };
  }

  #payload(stored: unknown): P {
    if (typeof stored !== 'object' || stored === null) return this.#decode(stored);
    let decoded = this.#decoded.get(stored);
    if (decoded === undefined && !this.#decoded.has(stored)) {
      decoded = this.#decode(stored);
      this.#decoded.set(stored, decoded);
    }
    return decoded as P;
  }

  #deadLetter(dead: DeadLetter): DeadLetter<P> {
    return { ...dead, intent: this.#record(dead.intent) };
  }
}
