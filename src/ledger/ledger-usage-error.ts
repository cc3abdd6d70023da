import { LedgerbotError } from '../core/ledgerbot-error.js';

/** A ledger client method was called with arguments it cannot send (a programming error). */
export class LedgerUsageError extends LedgerbotError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('LEDGER_USAGE', message, options);
  }
}
