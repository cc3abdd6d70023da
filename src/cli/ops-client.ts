import { LedgerbotError } from '../core/ledgerbot-error.js';
import type { BotConfig, HttpConfig } from '../runtime/config/bot-config.js';
import { UsageError } from './usage-error.js';

/**
 * Why a running bot's ops API could not be used. `unreachable`: nothing answers at its address
 * (connection refused: the bot is not running); `timeout`, `unauthorized`, `bad-response`.
 */
export type OpsFailure = 'unreachable' | 'timeout' | 'unauthorized' | 'bad-response';

export class OpsApiError extends LedgerbotError {
  readonly failure: OpsFailure;
  readonly status: number | undefined;
  /** The API's own error code (`NOT_FOUND`, `CONFLICT`, ...), when it answered with one. */
  readonly apiCode: string | undefined;

  constructor(
    failure: OpsFailure,
    message: string,
    extra: { status?: number; apiCode?: string; cause?: unknown } = {},
  ) {
    super('OPS_API', message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.failure = failure;
    this.status = extra.status;
    this.apiCode = extra.apiCode;
  }
}

export type OpsResponse = { readonly status: number; readonly body: unknown };

/** The ops API of the bot a config describes (its `http` section), as the CLI talks to it. */
export type OpsClient = {
  readonly baseUrl: string;
  /**
   * Any answer with a JSON body (also 4xx/5xx: the caller reads the error body). `timeoutMs`:
   * how long to wait for it (default 5 s).
   */
  request(method: string, path: string, timeoutMs?: number): Promise<OpsResponse>;
};

const TIMEOUT_MS = 5_000;

/** Hosts a server binds to but a client cannot connect to: talk to loopback instead. */
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]', '']);

/** The ops client for a config, or undefined when the config has no `http` section. */
export function opsClientFor(config: BotConfig): OpsClient | undefined {
  const http = config.http;
  if (http === undefined) return undefined;
  if (http.port === 0) {
    throw new UsageError(
      `${config.file} has http.port: 0 (a free port picked at each start), so the CLI cannot find the running bot; set a fixed port`,
    );
  }
  return createOpsClient(http);
}

export function createOpsClient(http: Pick<HttpConfig, 'host' | 'port' | 'token'>): OpsClient {
  const host = WILDCARD_HOSTS.has(http.host) ? '127.0.0.1' : http.host;
  const baseUrl = `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${http.port}`;
  return {
    baseUrl,
    request: async (method, path, timeoutMs = TIMEOUT_MS) => {
      let res: Response;
      try {
        res = await fetch(`${baseUrl}${path}`, {
          method,
          headers: {
            accept: 'application/json',
            ...(http.token === undefined ? {} : { authorization: `Bearer ${http.token}` }),
          },
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        const code = causeCode(err);
        if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH') {
          throw new OpsApiError(
            'unreachable',
            `the bot is not reachable at ${baseUrl} (${code}): is \`ledgerbot run\` running with this config?`,
            { cause: err },
          );
        }
        if ((err as Error).name === 'TimeoutError') {
          throw new OpsApiError(
            'timeout',
            `the bot at ${baseUrl} did not answer within ${timeoutMs} ms`,
            { cause: err },
          );
        }
        throw new OpsApiError(
          'unreachable',
          `cannot reach the bot at ${baseUrl}: ${(err as Error).message}${code === undefined ? '' : ` (${code})`}`,
          { cause: err },
        );
      }
      const text = await res.text();
      let body: unknown;
      try {
        body = text === '' ? null : JSON.parse(text);
      } catch {
        throw new OpsApiError(
          'bad-response',
          `${method} ${baseUrl}${path} answered ${res.status} with non-JSON text: is that port a ledgerbot ops server?`,
          { status: res.status },
        );
      }
      if (isStatus(res, 401)) {
        throw new OpsApiError(
          'unauthorized',
          http.token === undefined
            ? `the bot at ${baseUrl} needs a token: set http.token in the config (e.g. \${LEDGERBOT_HTTP_TOKEN})`
            : `the bot at ${baseUrl} refused the token of http.token: is it the token the bot runs with?`,
          { status: 401, apiCode: 'UNAUTHORIZED' },
        );
      }
      return { status: res.status, body };
    },
  };
}

/**
 * The ops client of a command that needs the running bot (pause, resume, reload): a config
 * without `http` is a usage error (exit 2), since the bot serves no API to ask.
 */
export function requireOpsClient(config: BotConfig, command: string): OpsClient {
  const client = opsClientFor(config);
  if (client === undefined) {
    throw new UsageError(
      `${config.file} has no http section, so the running bot serves no ops API for \`${command}\`; add http: { port: 9464 } (and http.token) and restart the bot`,
    );
  }
  return client;
}

// The status checks of ops answers live here, behind names: a bare `status === 404` elsewhere
// is banned by the lint rule (eslint.config.js), so each command reads as what it means.

/** Whether the answer has this HTTP status. */
export function isStatus(response: { readonly status: number }, status: number): boolean {
  return response.status === status;
}

/** 404: no such rule, intent or dead letter (or an endpoint an older bot does not have). */
export function isNotFound(response: OpsResponse): boolean {
  return isStatus(response, 404);
}

/**
 * A fleet member's `202 { "forwarded": … }`: it does not run the rule, and posted the action for
 * the rule's owner (`owner` null while nobody holds the rule). Undefined for any other answer.
 */
export function forwardedTo(response: OpsResponse): { readonly owner: string | null } | undefined {
  if (!isStatus(response, 202)) return undefined;
  const forwarded = (response.body as { forwarded?: { owner?: unknown } } | null)?.forwarded;
  if (typeof forwarded !== 'object' || forwarded === null) return undefined;
  return { owner: typeof forwarded.owner === 'string' ? forwarded.owner : null };
}

/** The body of an answer with status `ok`; any other answer as an OpsApiError. */
export function expectStatus(
  response: OpsResponse,
  ok: number,
  method: string,
  path: string,
): unknown {
  if (!isStatus(response, ok)) throw opsErrorOf(method, path, response);
  return response.body;
}

/** `{error: {code, message}}` of an error answer, as an OpsApiError. */
export function opsErrorOf(method: string, path: string, response: OpsResponse): OpsApiError {
  const error = (response.body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  const code = typeof error?.code === 'string' ? error.code : undefined;
  const message = typeof error?.message === 'string' ? error.message : 'no error message';
  return new OpsApiError(
    'bad-response',
    `${method} ${path}: ${response.status}${code === undefined ? '' : ` ${code}`}: ${message}`,
    { status: response.status, ...(code === undefined ? {} : { apiCode: code }) },
  );
}

function causeCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const inner = (errors[0] as { code?: unknown }).code;
      if (typeof inner === 'string') return inner;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
