import { inspect } from 'node:util';
import { AbortError } from '../../core/abort-error.js';
import type { AuthProvider } from './auth-provider.js';

/** Sends no token: for participants that run without authorization (the sandbox, local dev). */
export class NoAuth implements AuthProvider {
  token(signal?: AbortSignal): Promise<string | undefined> {
    // A rejected promise, not a synchronous throw, like every other provider.
    if (signal?.aborted === true) {
      return Promise.reject(new AbortError(undefined, { cause: signal.reason }));
    }
    return Promise.resolve(undefined);
  }

  invalidate(): void {}

  close(): Promise<void> {
    return Promise.resolve();
  }

  toJSON(): Record<string, unknown> {
    return { type: 'none' };
  }

  toString(): string {
    return 'NoAuth';
  }

  [inspect.custom](): string {
    return this.toString();
  }
}
