import { MockAgent } from 'undici';
import { expect } from 'vitest';
import { specRoutes } from '../support/spec-routes.js';

export const ORIGIN = 'http://127.0.0.1:7575';

export type RecordedCall = {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string>>;
};

type Reply = { status: number; body: string; contentType: string | undefined };

/**
 * An undici MockAgent standing in for a participant: it records every request and answers from
 * a queue of replies, so tests can assert the exact method, path, query and body sent.
 */
export class MockLedger {
  readonly agent = new MockAgent();
  readonly calls: RecordedCall[] = [];
  readonly #replies: Reply[] = [];

  constructor(origin = ORIGIN) {
    this.agent.disableNetConnect();
    this.agent
      .get(origin)
      .intercept({ path: () => true, method: () => true })
      .reply((opts) => {
        const url = new URL(opts.path, origin);
        const raw = typeof opts.body === 'string' ? opts.body : undefined;
        this.calls.push({
          method: opts.method,
          path: url.pathname,
          query: url.searchParams,
          body: raw === undefined ? undefined : (JSON.parse(raw) as unknown),
          headers: lowerCase(opts.headers),
        });
        const next = this.#replies.shift();
        if (next === undefined) return { statusCode: 599, data: 'no reply queued' };
        return {
          statusCode: next.status,
          data: next.body,
          responseOptions:
            next.contentType === undefined ? {} : { headers: { 'content-type': next.contentType } },
        };
      })
      .persist();
  }

  /** Queues a JSON answer (tests validate samples with `specResponse`). */
  replyJson(status: number, body: unknown): void {
    this.#replies.push({
      status,
      body: JSON.stringify(body),
      contentType: 'application/json',
    });
  }

  replyText(status: number, body: string, contentType: string | undefined = 'text/plain'): void {
    this.#replies.push({ status, body, contentType });
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

function lowerCase(headers: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers === undefined || headers === null) return out;
  const entries: [string, unknown][] = Array.isArray(headers)
    ? pairs(headers as unknown[])
    : Object.entries(headers as Record<string, unknown>);
  for (const [k, v] of entries) out[k.toLowerCase()] = String(v);
  return out;
}

function pairs(flat: unknown[]): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([String(flat[i]), flat[i + 1]]);
  return out;
}

/**
 * Asserts the one call a client method made: its method, path and body, with the body checked
 * against the operation's request schema in the 3.5 spec and, where the operation exists there,
 * in the 3.4 spec (`only35` for requests that use 3.5-only fields on purpose).
 */
export function expectSpecCall(
  call: RecordedCall | undefined,
  method: string,
  path: string,
  options: { only35?: boolean } = {},
): RecordedCall {
  expect(call).toBeDefined();
  const c = call as RecordedCall;
  expect(c.method).toBe(method);
  expect(c.path).toBe(path);
  specRoutes('openapi-3.5').assertRequest(method, path, c.body);
  const v34 = specRoutes('openapi-3.4');
  if (options.only35 !== true && v34.find(method, path) !== undefined) {
    v34.assertRequest(method, path, c.body);
  }
  return c;
}

/** Validates a sample answer against the 3.5 spec's response schema for `method path`. */
export function specResponse<T>(method: string, path: string, status: number, body: T): T {
  specRoutes('openapi-3.5').assertResponse(method, path, status, body);
  return body;
}
