import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from './sandbox-auth.js';

/** Every path and method of the 3.5 OpenAPI catalogue (a test keeps this in sync with the spec). */
export const OPENAPI_OPERATIONS = [
  'POST /v2/commands/submit-and-wait',
  'POST /v2/commands/submit-and-wait-for-transaction',
  'POST /v2/commands/submit-and-wait-for-reassignment',
  'POST /v2/commands/submit-and-wait-for-transaction-tree',
  'POST /v2/commands/async/submit',
  'POST /v2/commands/async/submit-reassignment',
  'POST /v2/commands/completions',
  'POST /v2/commands/command-completions',
  'POST /v2/events/events-by-contract-id',
  'GET /v2/version',
  'POST /v2/dars/validate',
  'POST /v2/dars',
  'GET /v2/packages',
  'POST /v2/packages',
  'GET /v2/packages/{package-id}',
  'GET /v2/packages/{package-id}/status',
  'GET /v2/package-vetting',
  'POST /v2/package-vetting',
  'POST /v2/package-vetting/list',
  'POST /v2/package-vetting/update',
  'GET /v2/parties',
  'POST /v2/parties',
  'POST /v2/parties/external/allocate',
  'GET /v2/parties/participant-id',
  'GET /v2/parties/{party}',
  'PATCH /v2/parties/{party}',
  'POST /v2/parties/external/generate-topology',
  'POST /v2/state/active-contracts',
  'GET /v2/state/active-contracts-page',
  'POST /v2/state/active-contracts-page',
  'GET /v2/state/connected-synchronizers',
  'GET /v2/state/ledger-end',
  'GET /v2/state/latest-pruned-offsets',
  'POST /v2/updates',
  'POST /v2/updates/flats',
  'POST /v2/updates/trees',
  'GET /v2/updates/transaction-tree-by-offset/{offset}',
  'POST /v2/updates/transaction-by-offset',
  'POST /v2/updates/update-by-offset',
  'POST /v2/updates/transaction-by-id',
  'POST /v2/updates/update-by-id',
  'GET /v2/updates/transaction-tree-by-id/{update-id}',
  'POST /v2/updates/get-updates-page',
  'GET /v2/users',
  'POST /v2/users',
  'GET /v2/users/{user-id}',
  'DELETE /v2/users/{user-id}',
  'PATCH /v2/users/{user-id}',
  'GET /v2/authenticated-user',
  'GET /v2/users/{user-id}/rights',
  'POST /v2/users/{user-id}/rights',
  'PATCH /v2/users/{user-id}/rights',
  'PATCH /v2/users/{user-id}/identity-provider-id',
  'GET /v2/idps',
  'POST /v2/idps',
  'GET /v2/idps/{idp-id}',
  'DELETE /v2/idps/{idp-id}',
  'PATCH /v2/idps/{idp-id}',
  'POST /v2/interactive-submission/prepare',
  'POST /v2/interactive-submission/execute',
  'POST /v2/interactive-submission/executeAndWait',
  'POST /v2/interactive-submission/executeAndWaitForTransaction',
  'GET /v2/interactive-submission/preferred-package-version',
  'POST /v2/interactive-submission/preferred-packages',
  'GET /livez',
  'GET /readyz',
  'POST /v2/contracts/contract-by-id',
] as const;

/** The websocket channels of the 3.5 AsyncAPI. */
export const ASYNCAPI_CHANNELS = [
  '/v2/commands/completions',
  '/v2/commands/command-completions',
  '/v2/state/active-contracts',
  '/v2/updates',
  '/v2/updates/flats',
  '/v2/updates/trees',
] as const;

export type RouteContext = {
  readonly method: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The parsed JSON body (undefined when there was none). */
  readonly body: unknown;
  readonly principal: Principal;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
};

export type RouteResult =
  | { readonly status: number; readonly json: string }
  | { readonly status: number; readonly text: string }
  /** `application/octet-stream`, with extra headers (`Canton-Package-Hash`). */
  | {
      readonly status: number;
      readonly bytes: Uint8Array;
      readonly headers: Readonly<Record<string, string>>;
    }
  /** The handler dealt with the response itself (e.g. destroyed the connection). */
  | { readonly handled: true };

export type Handler = (ctx: RouteContext) => RouteResult | Promise<RouteResult>;

export type Route = {
  readonly method: string;
  readonly template: string;
  readonly handler: Handler | undefined;
  /** Health endpoints answer without a token. */
  readonly public: boolean;
  readonly match: (path: string) => Record<string, string> | undefined;
};

function matcher(template: string): (path: string) => Record<string, string> | undefined {
  if (!template.includes('{')) return (path) => (path === template ? {} : undefined);
  const names: string[] = [];
  const re = new RegExp(
    '^' +
      template
        .split('/')
        .map((seg) => {
          const m = /^\{(.+)\}$/.exec(seg);
          if (m === null) return seg.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
          names.push(m[1]!);
          return '([^/]+)';
        })
        .join('/') +
      '$',
  );
  return (path) => {
    const m = re.exec(path);
    if (m === null) return undefined;
    const out: Record<string, string> = {};
    names.forEach((n, i) => (out[n] = decodeURIComponent(m[i + 1]!)));
    return out;
  };
}

/**
 * Routes for the whole catalogue: implemented handlers by "METHOD /template", the rest answer the
 * 501 the sandbox gives for what it does not support. Literal paths win over parameters.
 */
export class RouteTable {
  readonly #exact = new Map<string, Route>();
  readonly #templated: Route[] = [];

  constructor(handlers: Readonly<Record<string, Handler>>) {
    const known = new Set<string>(OPENAPI_OPERATIONS);
    for (const key of Object.keys(handlers)) {
      if (!known.has(key)) throw new Error(`no such operation in the catalogue: ${key}`);
    }
    for (const op of OPENAPI_OPERATIONS) {
      const [method, template] = op.split(' ') as [string, string];
      const route: Route = {
        method,
        template,
        handler: handlers[op],
        public: template === '/livez' || template === '/readyz',
        match: matcher(template),
      };
      if (template.includes('{')) this.#templated.push(route);
      else this.#exact.set(op, route);
    }
  }

  /** The route, or 'method' when the path exists with other methods, or undefined. */
  find(
    method: string,
    path: string,
  ): { route: Route; params: Record<string, string> } | 'method' | undefined {
    const exact = this.#exact.get(`${method} ${path}`);
    if (exact !== undefined) return { route: exact, params: {} };
    let pathKnown = false;
    for (const r of this.#exact.values()) if (r.template === path) pathKnown = true;
    for (const r of this.#templated) {
      const params = r.match(path);
      if (params === undefined) continue;
      if (r.method === method) return { route: r, params };
      pathKnown = true;
    }
    return pathKnown ? 'method' : undefined;
  }
}
