import { inspect } from 'node:util';
import { AbortError } from '../../core/abort-error.js';
import { AuthError } from './auth-error.js';
import type { AuthProvider } from './auth-provider.js';
import { REDACTED } from './redact-secrets.js';

/** A fixed bearer token, e.g. a long-lived one from the operator. */
export class StaticTokenAuth implements AuthProvider {
  readonly #token: string;

  constructor(token: string) {
    // A library caller's unset environment variable arrives as undefined, whatever the types say.
    if (typeof token !== 'string') {
      throw new AuthError(
        'AUTH_CONFIG_INVALID',
        `The static auth token is ${token === undefined ? 'missing' : `not text (${typeof token})`}: set auth.token.`,
      );
    }
    const trimmed = token.trim();
    if (trimmed === '') {
      throw new AuthError('AUTH_CONFIG_INVALID', 'The static auth token is empty: set auth.token.');
    }
    this.#token = trimmed;
  }

  token(signal?: AbortSignal): Promise<string | undefined> {
    // A rejected promise, not a synchronous throw, like every other provider.
    if (signal?.aborted === true) {
      return Promise.reject(new AbortError(undefined, { cause: signal.reason }));
    }
    return Promise.resolve(this.#token);
  }

  /** Nothing to refresh: a rejected static token stays rejected until the operator replaces it. */
  invalidate(): void {}

  close(): Promise<void> {
    return Promise.resolve();
  }

  toJSON(): Record<string, unknown> {
    return { type: 'static', token: REDACTED };
  }

  toString(): string {
    return `StaticTokenAuth(token: ${REDACTED})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}
