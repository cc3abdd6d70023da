/** The HTTP plumbing the ops routes share (see ops-server.ts). */

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

export type Route = {
  readonly method: string;
  readonly pattern: RegExp;
  readonly auth: boolean;
  readonly handle: (params: string[], url: URL) => Promise<Answer> | Answer;
};

export type Answer = { status: number; body: unknown; type?: 'json' | 'text' | 'metrics' };

export function notFound(message: string): HttpProblem {
  return new HttpProblem(404, 'NOT_FOUND', message);
}

/** Epoch ms as the API writes times (ISO 8601, UTC). */
export { isoTime as iso } from '../intent-view.js';
