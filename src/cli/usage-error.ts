import { LedgerbotError } from '../core/ledgerbot-error.js';

/** Bad command-line usage. The CLI prints the message and exits with code 2. */
export class UsageError extends LedgerbotError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('USAGE', message, options);
  }
}
