/** The HTTP plumbing the ops routes share (see ops-server.ts). */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LedgerApiError } from '../../ledger/ledger-api-error.js';
import { LedgerTransportError } from '../../ledger/ledger-transport-error.js';

/** A failed request, answered as `{error: {code, message}}`. */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** How a request proved it may call an endpoint: no token is configured, the token, or a session. */
export type Credential = 'open' | 'bearer' | 'cookie' | 'none';

/** What a handler gets besides the path parameters and the URL. */
export type RouteRequest = {
  readonly req: IncomingMessage;
  /** For the answers that stream (`GET /events`): the handler writes, then returns STREAMED. */
  readonly res: ServerResponse;
  /** The body, for routes with `body: true` (at most MAX_BODY bytes); '' otherwise. */
  readonly body: string;
  readonly credential: Credential;
};

export type Route = {
  readonly method: string;
  readonly pattern: RegExp;
  readonly auth: boolean;
  /** The handler reads the request body (at most MAX_BODY bytes: more is 413). */
  readonly body?: boolean;
  /** A POST that a read-only server still takes (login and logout change nothing of the bot). */
  readonly readOnlyAllowed?: boolean;
  readonly handle: (params: string[], url: URL, request: RouteRequest) => Promise<Answer> | Answer;
};

export type Answer = {
  status: number;
  body: unknown;
  /** `asset`: `body` is text sent as `contentType`; `streamed`: the handler answered itself. */
  type?: 'json' | 'text' | 'metrics' | 'asset' | 'streamed';
  contentType?: string;
  headers?: Readonly<Record<string, string>>;
};

/** The answer of a handler that wrote the response itself (a stream). */
export const STREAMED: Answer = { status: 200, body: null, type: 'streamed' };

/** The largest request body read (the login form): 4 KiB. */
export const MAX_BODY = 4096;

export function notFound(message: string): HttpProblem {
  return new HttpProblem(404, 'NOT_FOUND', message);
}

/**
 * A failed ledger read of an ops call as its answer: 503 `UNAVAILABLE` when the participant
 * cannot be reached, 502 `LEDGER_ERROR` when it refused; undefined for any other error.
 */
export function ledgerProblem(err: unknown, what: string): HttpProblem | undefined {
  if (err instanceof LedgerTransportError) {
    return new HttpProblem(503, 'UNAVAILABLE', `the participant cannot be reached: ${err.message}`);
  }
  if (err instanceof LedgerApiError) {
    return new HttpProblem(502, 'LEDGER_ERROR', `the participant refused ${what}: ${err.message}`);
  }
  return undefined;
}

export function badRequest(message: string): HttpProblem {
  return new HttpProblem(400, 'BAD_REQUEST', message);
}

/** Epoch ms as the API writes times (ISO 8601, UTC). */
export { isoTime as iso } from '../intent-view.js';
