import { LedgerbotError } from '../core/ledgerbot-error.js';

export type StoreErrorCode =
  | 'STORE_OPEN_FAILED'
  /** Another process (a running bot, a writing CLI command) holds the store's writer lock. */
  | 'STORE_LOCKED'
  | 'STORE_SCHEMA_TOO_NEW'
  | 'STORE_CLOSED'
  | 'STORE_UNKNOWN_INTENT'
  | 'STORE_NOT_JSON'
  | 'STORE_BAD_ARGUMENT'
  | 'STORE_ASYNC_BATCH'
  | 'STORE_COMMIT_FAILED'
  /** A write to a store opened with `readonly: true`. */
  | 'STORE_READ_ONLY'
  /** The file holds a journal row the store cannot read. */
  | 'STORE_CORRUPT'
  /** A journal imported into a store that already holds one (`JournalTransfer.importJournal`). */
  | 'STORE_NOT_EMPTY'
  /**
   * A commit refused because this instance no longer holds the lease it writes under (a fleet
   * member that was paused past its lease, whose work another instance has taken over).
   */
  | 'STORE_FENCED';

/** A failure of the durable store; `code` says which. */
export class StoreError extends LedgerbotError<StoreErrorCode> {}
