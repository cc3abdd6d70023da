import { LedgerbotError } from './ledgerbot-error.js';

/** Thrown when an operation is cancelled through its AbortSignal. */
export class AbortError extends LedgerbotError {
  constructor(message = 'The operation was aborted', options?: { cause?: unknown }) {
    super('ABORTED', message, options);
  }
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw new AbortError(undefined, { cause: signal.reason });
}
