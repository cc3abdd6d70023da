import type { IncomingMessage, ServerResponse } from 'node:http';
import { FaultConfigError, parseFaults } from './fault-injector.js';
import { errorJson, readBody, sendJson } from './http-io.js';
import { notFoundBody } from './not-found-body.js';
import { asObject } from './request-parsing.js';
import type { SandboxContext } from './sandbox-context.js';
import { SandboxApiError } from './sandbox-api-error.js';
import type { WebsocketStreams } from './websocket-streams.js';

export type ControlHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * The `/sandbox/*` test control plane (docs/sandbox.md "Fault injection"): faults, their
 * counters, and pruning. Unauthenticated, JSON in and out.
 */
export function controlRoutes(s: SandboxContext, streams: WebsocketStreams): ControlHandler {
  const faults = (method: string, body: () => unknown, res: ServerResponse): void => {
    if (method === 'GET') return sendJson(res, 200, JSON.stringify(s.faults.faults));
    if (method === 'DELETE') {
      s.faults.clear();
      s.hub.setDropEvery(undefined);
      return sendJson(res, 200, '{}');
    }
    const given = parseFaults(body());
    s.faults.set(given);
    s.hub.setDropEvery(s.faults.faults.closeStreamsEveryMs, (n) => s.faults.countDroppedStreams(n));
    if (s.faults.faults.refuseStreams === true) streams.dropLedgerStreams();
    // Only the POST that sets streamErrors ends the open streams; later frames draw as they go.
    if (given.streamErrors !== undefined) streams.failLedgerStreams();
    return sendJson(res, 200, JSON.stringify(s.faults.faults));
  };

  const prune = (body: () => unknown, res: ServerResponse): void => {
    const o = asObject(body());
    if (typeof o.offset !== 'number' || !Number.isInteger(o.offset)) {
      throw new FaultConfigError('prune takes {"offset": <positive integer>}');
    }
    const r = s.engine.prune(o.offset);
    if (!r.ok) {
      const e = r.error;
      const err = new SandboxApiError(e.code, e.cause, {
        category: e.category,
        ...(e.context === undefined ? {} : { context: e.context }),
      });
      return sendJson(res, err.httpStatus, errorJson(s, err));
    }
    s.prunedAtMs = s.clock.now();
    sendJson(res, 200, JSON.stringify({ prunedUpToInclusive: o.offset }));
  };

  return async (req, res) => {
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?')[0];
    const text = await readBody(req);
    const body = (): unknown => {
      try {
        return text === '' ? {} : JSON.parse(text);
      } catch {
        throw new FaultConfigError('the body is not JSON');
      }
    };
    try {
      if (path === '/sandbox/faults' && ['GET', 'POST', 'DELETE'].includes(method)) {
        return faults(method, body, res);
      }
      if (path === '/sandbox/fault-stats' && method === 'GET') {
        return sendJson(res, 200, JSON.stringify(s.faults.stats()));
      }
      if (path === '/sandbox/prune' && method === 'POST') return prune(body, res);
      sendJson(res, 404, notFoundBody(req));
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      const apiError = new SandboxApiError('INVALID_ARGUMENT', msg, { jsonLayer: true });
      sendJson(res, 400, errorJson(s, apiError));
    }
  };
}
