import type { BigIntStats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { inspect } from 'node:util';
import { throwIfAborted } from '../../core/abort-error.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { AuthError } from './auth-error.js';
import type { AuthProvider } from './auth-provider.js';

export type TokenFileAuthOptions = {
  readonly logger?: Logger;
};

type Cached = { readonly token: string; readonly key: string };

/**
 * Reads the bearer token from a file that something else keeps fresh (a sidecar, a mounted
 * Kubernetes secret). Every `token()` stats the file and re-reads it only when its identity or
 * timestamps changed, so a rotated token is picked up on the next request without a watcher.
 * `stat` follows symlinks, which catches the atomic symlink swap of mounted secrets.
 */
export class TokenFileAuth implements AuthProvider {
  readonly #path: string;
  readonly #logger: Logger;
  #cached: Cached | undefined;
  #closed = false;

  constructor(path: string, options: TokenFileAuthOptions = {}) {
    if (typeof path !== 'string' || path.trim() === '') {
      throw new AuthError(
        'AUTH_CONFIG_INVALID',
        `The token file path is ${path === undefined ? 'missing' : 'empty'}: set auth.path.`,
      );
    }
    this.#path = path;
    this.#logger = options.logger ?? silentLogger;
  }

  get path(): string {
    return this.#path;
  }

  async token(signal?: AbortSignal): Promise<string | undefined> {
    throwIfAborted(signal);
    if (this.#closed) throw new AuthError('AUTH_CLOSED', 'The token file auth provider is closed.');
    const st = await this.#stat();
    const key = fileKey(st);
    if (this.#cached?.key === key) return this.#cached.token;
    let text: string;
    try {
      text = await readFile(
        this.#path,
        signal === undefined ? { encoding: 'utf8' } : { encoding: 'utf8', signal },
      );
    } catch (err) {
      throwIfAborted(signal);
      throw this.#fsError(err);
    }
    const token = text.trim();
    if (token === '') {
      // A writer that truncates and then writes (`echo > file`) leaves the file empty for a
      // moment; keep serving the previous token and look again on the next call.
      if (this.#cached !== undefined) {
        this.#logger.debug({ path: this.#path }, 'token file is empty; keeping the previous token');
        return this.#cached.token;
      }
      throw new AuthError(
        'AUTH_TOKEN_FILE_EMPTY',
        `The token file ${this.#path} is empty: write the bearer token into it.`,
      );
    }
    if (this.#cached !== undefined) this.#logger.info({ path: this.#path }, 'token file changed');
    this.#cached = { token, key };
    return token;
  }

  invalidate(): void {
    this.#cached = undefined;
  }

  close(): Promise<void> {
    this.#closed = true;
    this.#cached = undefined;
    return Promise.resolve();
  }

  toJSON(): Record<string, unknown> {
    return { type: 'file', path: this.#path };
  }

  toString(): string {
    return `TokenFileAuth(${this.#path})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }

  async #stat(): Promise<BigIntStats> {
    try {
      return await stat(this.#path, { bigint: true });
    } catch (err) {
      throw this.#fsError(err);
    }
  }

  #fsError(err: unknown): AuthError {
    const code = (err as { code?: unknown } | null)?.code;
    if (code === 'ENOENT') {
      return new AuthError(
        'AUTH_TOKEN_FILE_MISSING',
        `The token file ${this.#path} does not exist: create it or fix auth.path.`,
      );
    }
    const reason = typeof code === 'string' ? code : 'unknown error';
    return new AuthError(
      'AUTH_TOKEN_FILE_UNREADABLE',
      `The token file ${this.#path} cannot be read (${reason}): check its permissions.`,
      { retryable: code === 'EMFILE' || code === 'ENFILE' || code === 'EAGAIN' },
    );
  }
}

function fileKey(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}
