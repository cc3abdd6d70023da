import { LedgerbotError } from '../core/ledgerbot-error.js';

/** A sandbox that cannot start: bad option, package, model or user spec. The CLI exits with 2. */
export class SandboxConfigError extends LedgerbotError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SANDBOX_CONFIG', message, options);
  }
}
