/**
 * The base of every error ledgerbot throws on purpose. `code` is stable and machine-readable;
 * the message says what happened and what to do next.
 */
export class LedgerbotError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = new.target.name;
  }
}
