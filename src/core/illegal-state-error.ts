import { LedgerbotError } from './ledgerbot-error.js';

/** A call that is not allowed in the object's current lifecycle state, or a broken invariant. */
export class IllegalStateError extends LedgerbotError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ILLEGAL_STATE', message, options);
  }
}
