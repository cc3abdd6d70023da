import { inspect } from 'node:util';
import type { Dispatcher } from 'undici';
import { AbortError, throwIfAborted } from '../../core/abort-error.js';
import { systemClock, type Clock } from '../../core/clock.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { parseHttpUrl } from '../parse-http-url.js';
import { Agent } from '../undici-agent.js';
import { AuthError } from './auth-error.js';
import type { AuthProvider } from './auth-provider.js';
import { REDACTED, redactSecrets, redactUrl } from './redact-secrets.js';

export type OAuth2ClientAuth = 'basic' | 'body';

export type OAuth2ClientCredentialsOptions = {
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly audience?: string;
  readonly scope?: string;
  /**
   * How to send the client credentials (RFC 6749 §2.3.1): `basic` (the default every server must
   * support) in an Authorization header, or `body` as `client_id`/`client_secret` form fields.
   */
  readonly clientAuth?: OAuth2ClientAuth;
  /** Fetch a new token this long before the current one expires (default 60 s, at most half its lifetime). */
  readonly refreshMarginMs?: number;
  /** The lifetime to assume when the answer has no `expires_in` (default 5 min). */
  readonly defaultLifetimeMs?: number;
  /** Bound on waiting for the token endpoint's headers and body, each (default 10 s). */
  readonly requestTimeoutMs?: number;
  readonly clock?: Clock;
  readonly dispatcher?: Dispatcher;
  readonly logger?: Logger;
};

type Cached = { readonly token: string; readonly refreshAt: number; readonly expiresAt: number };

/**
 * OAuth2 client-credentials grant (RFC 6749 §4.4) against the identity provider's token endpoint.
 * The token is cached and fetched anew once `refreshAt` (expiry minus a margin) has passed;
 * concurrent callers share one request. If a refresh fails while the old token is still valid,
 * the old token is served. Errors name the token URL, never the secret or a token.
 */
export class OAuth2ClientCredentialsAuth implements AuthProvider {
  readonly #opts: OAuth2ClientCredentialsOptions;
  readonly #url: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #closing = new AbortController();
  #cached: Cached | undefined;
  #flight: Promise<Cached> | undefined;
  #agent: InstanceType<typeof Agent> | undefined;

  constructor(options: OAuth2ClientCredentialsOptions) {
    for (const key of ['tokenUrl', 'clientId', 'clientSecret'] as const) {
      // A library caller's unset environment variable arrives as undefined, whatever the types say.
      const value = options[key] as unknown;
      if (typeof value !== 'string' || value.trim() === '') {
        throw new AuthError(
          'AUTH_CONFIG_INVALID',
          `OAuth2 auth needs a non-empty ${key}${value === undefined ? '; it is missing (an unset environment variable?)' : ''}.`,
        );
      }
    }
    const checked = parseHttpUrl(options.tokenUrl);
    if (!checked.ok) {
      throw new AuthError(
        'AUTH_CONFIG_INVALID',
        checked.problem === 'not-a-url'
          ? `The OAuth2 tokenUrl ${redactUrl(options.tokenUrl)} is not a valid URL.`
          : 'The OAuth2 tokenUrl must be an http(s) URL.',
      );
    }
    this.#opts = options;
    this.#url = redactUrl(options.tokenUrl);
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger ?? silentLogger;
  }

  async token(signal?: AbortSignal): Promise<string | undefined> {
    throwIfAborted(signal);
    this.#throwIfClosed();
    const cached = this.#cached;
    if (cached !== undefined && this.#clock.now() < cached.refreshAt) return cached.token;
    this.#flight ??= this.#fetch().finally(() => {
      this.#flight = undefined;
    });
    try {
      return (await untilAborted(this.#flight, signal)).token;
    } catch (err) {
      if (err instanceof AbortError || this.#closing.signal.aborted) throw err;
      if (cached !== undefined && this.#clock.now() < cached.expiresAt && this.#cached === cached) {
        this.#logger.warn(
          { tokenUrl: this.#url, code: (err as AuthError).code },
          'OAuth2 token refresh failed; using the current token until it expires',
        );
        return cached.token;
      }
      throw err;
    }
  }

  invalidate(): void {
    this.#cached = undefined;
  }

  close(): Promise<void> {
    this.#closing.abort();
    this.#cached = undefined;
    const agent = this.#agent;
    this.#agent = undefined;
    // destroy, not close: a token endpoint that never answers must not hold up the bot's stop.
    return agent === undefined ? Promise.resolve() : agent.destroy();
  }

  /** The dispatcher given, else an agent of its own, made at the first request. */
  #dispatcher(): Dispatcher {
    return this.#opts.dispatcher ?? (this.#agent ??= new Agent());
  }

  toJSON(): Record<string, unknown> {
    return {
      type: 'oauth2',
      tokenUrl: this.#url,
      clientId: this.#opts.clientId,
      clientSecret: REDACTED,
      ...(this.#opts.audience === undefined ? {} : { audience: this.#opts.audience }),
      ...(this.#opts.scope === undefined ? {} : { scope: this.#opts.scope }),
      clientAuth: this.#opts.clientAuth ?? 'basic',
    };
  }

  toString(): string {
    return `OAuth2ClientCredentialsAuth(${this.#url}, clientId: ${this.#opts.clientId}, clientSecret: ${REDACTED})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }

  #throwIfClosed(): void {
    if (this.#closing.signal.aborted) {
      throw new AuthError('AUTH_CLOSED', 'The OAuth2 auth provider is closed.');
    }
  }

  async #fetch(): Promise<Cached> {
    const o = this.#opts;
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (o.scope !== undefined && o.scope !== '') form.set('scope', o.scope);
    if (o.audience !== undefined && o.audience !== '') form.set('audience', o.audience);
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (o.clientAuth === 'body') {
      form.set('client_id', o.clientId);
      form.set('client_secret', o.clientSecret);
    } else {
      // RFC 6749 §2.3.1: form-encode id and secret before joining them with ':'.
      const pair = `${formEncode(o.clientId)}:${formEncode(o.clientSecret)}`;
      headers.authorization = `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
    }
    const timeout = o.requestTimeoutMs ?? 10_000;
    const started = this.#clock.now();
    let status: number;
    let text: string;
    try {
      // The dispatcher's own `request`, not undici's index: the index is large (see
      // undici-agent.ts), and `run`'s bundle gives a dynamic import of it a default export only.
      const url = new URL(o.tokenUrl);
      const res = await this.#dispatcher().request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers,
        body: form.toString(),
        signal: this.#closing.signal,
        headersTimeout: timeout,
        bodyTimeout: timeout,
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      this.#throwIfClosed();
      throw new AuthError(
        'AUTH_OAUTH2_UNREACHABLE',
        `Could not get a token from the OAuth2 token endpoint ${this.#url} (${this.#describe(err)}): check the URL and that the identity provider is up.`,
        { retryable: true },
      );
    }
    if (status < 200 || status > 299) throw this.#statusError(status, text);

    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const body = (json ?? {}) as { access_token?: unknown; expires_in?: unknown };
    if (typeof body.access_token !== 'string' || body.access_token === '') {
      throw new AuthError(
        'AUTH_OAUTH2_BAD_RESPONSE',
        `The OAuth2 token endpoint ${this.#url} answered ${status} without an access_token: check that tokenUrl is the token endpoint.`,
      );
    }
    const expiresInS = Number(body.expires_in);
    const lifetime =
      body.expires_in !== undefined && Number.isFinite(expiresInS) && expiresInS > 0
        ? expiresInS * 1000
        : (o.defaultLifetimeMs ?? 300_000);
    const margin = Math.min(o.refreshMarginMs ?? 60_000, lifetime / 2);
    // Measured from before the request, so network delay only makes us refresh earlier.
    const cached = {
      token: body.access_token,
      refreshAt: started + lifetime - margin,
      expiresAt: started + lifetime,
    };
    this.#cached = cached;
    this.#logger.debug({ tokenUrl: this.#url, lifetimeMs: lifetime }, 'fetched OAuth2 token');
    return cached;
  }

  #statusError(status: number, text: string): AuthError {
    let detail = '';
    try {
      const e = JSON.parse(text) as { error?: unknown; error_description?: unknown };
      if (typeof e.error === 'string') {
        detail = ` (${e.error}${typeof e.error_description === 'string' ? `: ${e.error_description}` : ''})`;
      }
    } catch {
      // Not an RFC 6749 error body; the status says enough.
    }
    detail = redactSecrets(detail, [this.#opts.clientSecret]).slice(0, 300);
    if (status === 408 || status === 429 || status >= 500) {
      return new AuthError(
        'AUTH_OAUTH2_UNAVAILABLE',
        `The OAuth2 token endpoint ${this.#url} answered ${status}${detail}: will try again.`,
        { retryable: true },
      );
    }
    if (status >= 400) {
      return new AuthError(
        'AUTH_OAUTH2_REJECTED',
        `The OAuth2 token endpoint ${this.#url} rejected the client credentials with ${status}${detail}: check clientId, clientSecret, audience and scope.`,
      );
    }
    return new AuthError(
      'AUTH_OAUTH2_BAD_RESPONSE',
      `The OAuth2 token endpoint ${this.#url} answered ${status}: check that tokenUrl is the token endpoint.`,
    );
  }

  #describe(err: unknown): string {
    const e = err as { code?: unknown; message?: unknown } | null;
    const text =
      typeof e?.code === 'string' ? e.code : typeof e?.message === 'string' ? e.message : 'error';
    return redactSecrets(text, [this.#opts.clientSecret, this.#cached?.token]);
  }
}

function formEncode(s: string): string {
  return new URLSearchParams({ x: s }).toString().slice(2);
}

/** Waits for a shared promise, giving up (without cancelling it) when this caller's signal aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new AbortError(undefined, { cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
