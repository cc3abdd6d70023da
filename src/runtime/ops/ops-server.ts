import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../../core/clock.js';
import { LedgerbotError } from '../../core/ledgerbot-error.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import type { JournalQueries } from '../../store/journal-queries.js';
import { storeQueries } from '../../store/store-queries.js';
import type { Store } from '../../store/store.js';
import type { Bot } from '../bot.js';
import { RuntimeError } from '../runtime-error.js';
import { consoleRoutes } from './console-routes.js';
import { eventStream, type EventStreamLimits } from './event-stream.js';
import { explainRoute, type OpsExplainDeps } from './explain-route.js';
import { intentRoutes } from './intent-routes.js';
import { journalRoutes } from './journal-routes.js';
import type { ManualSlotOutcome } from './manual-slot.js';
import { HttpProblem, MAX_BODY, notFound, type Answer, type Route } from './ops-http.js';
import { crossOriginReason, hostName, isLoopbackHost, opsSessions } from './ops-sessions.js';
import { ReloadHistory, type ReloadOutcome } from './reload-history.js';
import type { OpsFleet } from './ops-fleet.js';
import { ruleRoutes } from './rule-routes.js';
import { ruleRows } from './rule-rows.js';
import { sessionRoutes } from './session-routes.js';
import { opsStatus, type OpsLedger } from './status-routes.js';
import { submissionRate } from './submission-rate.js';

export type { ReloadOutcome } from './reload-history.js';

export type OpsServerOptions = {
  readonly bot: Bot;
  /** The bot's store: the dead-letter endpoints change it (and read it, without `queries`). */
  readonly store: Store;
  /**
   * The journal's reads for the intent and dead-letter endpoints, `/status` and `/metrics`
   * (a store shared by a fleet answers them for the whole fleet); default: the store's own.
   */
  readonly queries?: JournalQueries;
  /** For the ledger end (the lag), and the participant `/status` names. */
  readonly ledger: OpsLedger;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port: number;
  /**
   * Bearer token (or the console's session cookie) for everything but /livez, /readyz,
   * /metrics, the console's files, /session and /login; absent: none needed.
   */
  readonly token?: string;
  /**
   * Without a token, a loopback-bound server answers only requests whose Host is the loopback
   * or one of these names (no port); see isLoopbackHost.
   */
  readonly allowedHosts?: readonly string[];
  /** Every state-changing call but /login and /logout answers 403 READ_ONLY (default false). */
  readonly readOnly?: boolean;
  /** /readyz fails above this lag in offsets (default 1000). */
  readonly readyMaxLag?: number;
  /** How long a ledger end read is reused (default 1 s). */
  readonly ledgerEndTtlMs?: number;
  /** prom-client's process metrics (default true). */
  readonly processMetrics?: boolean;
  /**
   * Why the bot has not started yet (the participant does not answer), for `/readyz`; the
   * server runs before the bot reaches the ledger so probes see that reason.
   */
  readonly waitingFor?: () => string | undefined;
  /** `POST /rules/reload`: re-reads the rule files (the CLI passes its reload); absent: 404. */
  readonly reload?: () => Promise<ReloadOutcome>;
  /**
   * The reloads by every path, for `GET /reload` (the CLI records SIGHUP and the file watch
   * here, and passes a `reload` that records too). Absent: the server records the reloads made
   * through `POST /rules/reload` only.
   */
  readonly reloads?: ReloadHistory;
  /** `GET /explain`: how it reads the participant (and the bot's parties); absent: 404. */
  readonly explain?: OpsExplainDeps;
  /** `POST /rules/{id}/run-slot`: runs a slot in the bot (see `manualSlotRunner`); absent: 404. */
  readonly runSlot?: (ruleId: string, at: number) => Promise<ManualSlotOutcome>;
  /** A fleet member's: `/status`'s `fleet`, and actions on rules another member runs. */
  readonly fleet?: OpsFleet;
  /** The bounds of `GET /events` (default EVENT_STREAM_LIMITS; tests lower them). */
  readonly eventStreamLimits?: Partial<EventStreamLimits>;
  readonly clock?: Clock;
  readonly logger?: Logger;
};

export type OpsServer = {
  /** `http://host:port`. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and closes open connections (and event streams). Idempotent. */
  close(): Promise<void>;
};

const STATE_CHANGING: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The ops endpoints of a running bot (docs/operations-api.md): health, readiness, Prometheus
 * metrics, status, the rules, intents and dead letters, live events, and the console page.
 * Listens on 127.0.0.1 unless told otherwise.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const { bot, store } = options;
  const queries = options.queries ?? storeQueries(store);
  const clock = options.clock ?? systemClock;
  const log = (options.logger ?? silentLogger).child({ component: 'ops' });
  const readOnly = options.readOnly === true;
  const sessions = opsSessions(options.token, clock);
  const reloads = options.reloads ?? new ReloadHistory(clock);
  const reload =
    options.reload === undefined || options.reloads !== undefined
      ? options.reload
      : reloads.recording(options.reload);

  const rows = ruleRows(bot, clock);
  const rate = submissionRate(bot, clock);
  const status = opsStatus({
    bot,
    store,
    queries,
    ledger: options.ledger,
    clock,
    log,
    readOnly,
    readyMaxLag: options.readyMaxLag ?? 1000,
    ledgerEndTtlMs: options.ledgerEndTtlMs ?? 1000,
    ...(options.processMetrics === undefined ? {} : { processMetrics: options.processMetrics }),
    ...(options.waitingFor === undefined ? {} : { waitingFor: options.waitingFor }),
    rules: rows,
    rate,
    ...(options.fleet === undefined ? {} : { fleet: () => options.fleet!.status() }),
  });
  const events = eventStream({
    bot,
    clock,
    log,
    rows,
    reloads,
    status: () => status.body(true),
    ...(options.eventStreamLimits === undefined ? {} : { limits: options.eventStreamLimits }),
  });

  const routes: Route[] = [
    ...status.routes,
    ...consoleRoutes(),
    ...sessionRoutes(sessions, readOnly),
    ...ruleRoutes({
      bot,
      rows,
      reloads,
      ...(reload === undefined ? {} : { reload }),
      ...(options.fleet === undefined ? {} : { fleet: options.fleet }),
    }),
    ...intentRoutes(queries),
    ...journalRoutes({
      bot,
      store,
      queries,
      clock,
      log,
      ...(options.runSlot === undefined ? {} : { runSlot: options.runSlot }),
      ...(options.fleet === undefined ? {} : { fleet: options.fleet }),
    }),
    explainRoute(bot, options.explain),
    events.route,
  ];

  /** Bound to a loopback address: see isLoopbackHost. */
  let loopback = false;
  const allowedHosts = new Set((options.allowedHosts ?? []).map((h) => h.toLowerCase()));
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let answer: Answer;
    let headers: Record<string, string> = {};
    const url = new URL(req.url ?? '/', 'http://ops');
    try {
      const path = url.pathname;
      const matching = routes
        .map((r) => ({ r, m: r.pattern.exec(path) }))
        .filter((x): x is { r: Route; m: RegExpExecArray } => x.m !== null);
      if (matching.length === 0) throw notFound(`no endpoint ${path}`);
      const hit = matching.find((x) => x.r.method === req.method);
      if (hit === undefined) {
        throw new HttpProblem(405, 'METHOD_NOT_ALLOWED', `${req.method ?? '?'} is not allowed`, {
          allow: [...new Set(matching.map((x) => x.r.method))].join(', '),
        });
      }
      const credential = sessions.credentialOf(req);
      const changing = STATE_CHANGING.has(hit.r.method);
      if (credential === 'open' && loopback && (hit.r.auth || changing)) {
        if (!isLoopbackHost(req.headers.host) && !allowedHosts.has(hostName(req.headers.host))) {
          throw new HttpProblem(
            403,
            'BAD_HOST',
            'without http.token this server answers requests to localhost, 127.0.0.1 and http.allowedHosts only',
          );
        }
      }
      if (changing) {
        const why = crossOriginReason(req, credential, allowedHosts);
        if (why !== undefined) throw new HttpProblem(403, 'CROSS_ORIGIN', why);
      }
      if (hit.r.auth && credential === 'none') {
        throw new HttpProblem(
          401,
          'UNAUTHORIZED',
          'this endpoint needs the ops bearer token (or a console session)',
          { 'www-authenticate': 'Bearer' },
        );
      }
      if (changing && readOnly && hit.r.readOnlyAllowed !== true) {
        throw new HttpProblem(403, 'READ_ONLY', 'this ops server is read-only (http.readOnly)');
      }
      const body = hit.r.body === true ? await readBody(req) : (req.resume(), '');
      const params = hit.m.slice(1).map(decodePathPart);
      answer = await hit.r.handle(params, url, { req, res, body, credential });
    } catch (err) {
      req.resume();
      const p = toProblem(err);
      if (p.status >= 500)
        log.warn({ status: p.status, errorCode: p.code, error: p.message }, 'ops request failed');
      headers = { ...p.headers };
      answer = { status: p.status, body: { error: { code: p.code, message: p.message } } };
    }
    log.debug({ method: req.method, path: url.pathname, status: answer.status }, 'ops request');
    if (answer.type !== 'streamed') send(res, answer, headers, status.metricsContentType);
  };

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  const listenHost = options.host ?? '127.0.0.1';
  const closeParts = (): void => {
    events.close();
    status.close();
    rows.close();
    rate.close();
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const why =
        err.code === 'EADDRINUSE'
          ? 'the port is in use (another bot, or another program): set http.port to a free one, or 0 for any'
          : err.code === 'EACCES'
            ? 'not allowed (a port below 1024 needs privileges): set http.port above 1023'
            : `${err.message}: check http.host and http.port`;
      closeParts();
      reject(
        new RuntimeError(
          'OPS_LISTEN_FAILED',
          `the ops API cannot listen on ${listenHost}:${options.port}: ${why}`,
          {
            cause: err,
          },
        ),
      );
    });
    server.listen(options.port, listenHost, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  loopback = isLoopbackHost(host);
  log.info({ url, auth: sessions.authRequired, readOnly }, 'ops server listening');
  let closing: Promise<void> | undefined;
  return {
    url,
    port: address.port,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        closeParts();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** A path parameter as text; a malformed `%` escape is the caller's mistake (400). */
function decodePathPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new HttpProblem(400, 'BAD_REQUEST', 'the path has a malformed % escape');
  }
}

/** The request body as text; more than MAX_BODY bytes is 413. */
async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) {
      throw new HttpProblem(413, 'TOO_LARGE', `the body may be at most ${MAX_BODY} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(
  res: ServerResponse,
  answer: Answer,
  headers: Record<string, string>,
  metricsType: string,
): void {
  const type = answer.type ?? 'json';
  // A null JSON body is no body (204).
  const body =
    type !== 'json'
      ? String(answer.body)
      : answer.body === null
        ? ''
        : `${JSON.stringify(answer.body)}\n`;
  res.writeHead(answer.status, {
    'cache-control': 'no-store',
    ...headers,
    ...answer.headers,
    'content-type':
      type === 'json'
        ? 'application/json; charset=utf-8'
        : type === 'metrics'
          ? metricsType
          : type === 'asset'
            ? (answer.contentType ?? 'application/octet-stream')
            : 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

function toProblem(err: unknown): HttpProblem {
  if (err instanceof HttpProblem) return err;
  if (err instanceof LedgerbotError) {
    switch (err.code) {
      case 'UNKNOWN_RULE':
      case 'NOT_DEAD_LETTERED':
        return new HttpProblem(404, 'NOT_FOUND', err.message);
      case 'RULE_DISABLED':
      case 'RULE_RESUMING':
      case 'SHADOW':
        return new HttpProblem(409, 'CONFLICT', err.message);
      case 'NOT_RUNNING':
      case 'STORE_CLOSED':
        return new HttpProblem(503, 'NOT_RUNNING', err.message);
    }
  }
  return new HttpProblem(500, 'INTERNAL', (err as Error).message ?? String(err));
}
