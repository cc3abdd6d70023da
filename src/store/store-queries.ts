import type { JournalQueries } from './journal-queries.js';
import type { Store } from './store.js';

/**
 * The operator's reads (`JournalQueries`) over a synchronous `Store` that answers them itself
 * (SQLite, or a library user's store): each query runs the store's read at once and settles with
 * its result, or rejects with what it threw (a closed store's STORE_CLOSED, say). A store whose
 * reads cannot be answered from one process (PostgreSQL, a fleet) brings its own `JournalQueries`.
 */
export function storeQueries<P>(store: Store<P>): JournalQueries<P> {
  return {
    getIntent: (commandId) => settle(() => store.getIntent(commandId)),
    listIntents: (query) => settle(() => store.listIntents(query)),
    getAttempts: (commandId) => settle(() => store.getAttempts(commandId)),
    getRecordedEvent: (commandId) => settle(() => store.getRecordedEvent(commandId)),
    countByState: () => settle(() => store.countByState()),
    listDeadLetters: (options) => settle(() => store.listDeadLetters(options)),
    getDeadLetter: (commandId) => settle(() => store.getDeadLetter(commandId)),
    listSlotRecords: () => settle(() => store.listSlotRecords()),
  };
}

/** A promise of `read()`'s result; a throw becomes its rejection (the executor catches it). */
function settle<T>(read: () => T): Promise<T> {
  return new Promise((resolve) => resolve(read()));
}
