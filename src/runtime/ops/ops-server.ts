import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../../core/clock.js';
import { LedgerbotError } from '../../core/ledgerbot-error.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import type { Store } from '../../store/store.js';
import type { BotLedger } from '../bot-ledger.js';
import type { Bot } from '../bot.js';
import type { RuleSetDiff } from '../rule-set-diff.js';
import { journalRoutes } from './journal-routes.js';
import type { ManualSlotOutcome } from './manual-slot.js';
import { notReadyReason } from './not-ready-reason.js';
import { recentIntentView } from '../intent-view.js';
import { HttpProblem, iso, notFound, type Answer, type Route } from './ops-http.js';
import { createOpsMetrics } from './ops-metrics.js';

export type OpsServerOptions = {
  readonly bot: Bot;
  /** The bot's store: the dead-letter endpoints read and change it. */
  readonly store: Store;
  /** For the ledger end (the lag). */
  readonly ledger: Pick<BotLedger, 'ledgerEnd'>;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Bearer token for everything but /livez, /readyz and /metrics; absent: none needed. */
  readonly token?: string;
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
  /** `POST /rules/{id}/run-slot`: runs a slot in the bot (see `manualSlotRunner`); absent: 404. */
  readonly runSlot?: (ruleId: string, at: number) => Promise<ManualSlotOutcome>;
  readonly clock?: Clock;
  readonly logger?: Logger;
};

/** What a reload did: applied (with the diff), or rejected with every problem. */
export type ReloadOutcome =
  | { readonly applied: true; readonly diff: RuleSetDiff }
  | { readonly applied: false; readonly errors: readonly string[] };

export type OpsServer = {
  /** `http://host:port`. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and closes open connections. Idempotent. */
  close(): Promise<void>;
};

const RECENT = 50;

/**
 * The ops endpoints of a running bot (docs/operations-api.md): health, readiness, Prometheus
 * metrics, status, pause and resume, dead letters. Listens on 127.0.0.1 unless told otherwise.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const { bot, store } = options;
  const clock = options.clock ?? systemClock;
  const log = (options.logger ?? silentLogger).child({ component: 'ops' });
  const readyMaxLag = options.readyMaxLag ?? 1000;
  const ttl = options.ledgerEndTtlMs ?? 1000;
  const tokenDigest = options.token === undefined ? undefined : digest(options.token);

  let end: { value: number; at: number } | undefined;
  let endError: string | undefined;
  let endRead: Promise<void> | undefined;
  const refreshLedgerEnd = async (): Promise<void> => {
    if (end !== undefined && clock.now() - end.at < ttl) return;
    endRead ??= (async () => {
      try {
        const value = await options.ledger.ledgerEnd({ signal: AbortSignal.timeout(2_000) });
        end = { value, at: clock.now() };
        endError = undefined;
      } catch (err) {
        endError = (err as Error).message;
      } finally {
        endRead = undefined;
      }
    })();
    await endRead;
  };
  const lag = (): number | undefined => {
    const processed = bot.processedOffset();
    return end === undefined || processed === undefined
      ? undefined
      : Math.max(0, end.value - processed);
  };

  const metrics = createOpsMetrics({
    bot,
    store,
    clock,
    ledgerEnd: () => end?.value,
    ...(options.processMetrics === undefined ? {} : { processMetrics: options.processMetrics }),
  });

  const readiness = (): Promise<string | undefined> =>
    notReadyReason({
      botState: bot.state,
      waitingFor: options.waitingFor?.(),
      streamExpected: bot.plan.updateFormat !== null,
      updatesConnected: bot.metrics.updatesConnected,
      processedOffset: () => bot.processedOffset(),
      maxLag: readyMaxLag,
      readLedgerEnd: async () => {
        await refreshLedgerEnd();
        if (end === undefined || endError !== undefined) {
          return { error: endError ?? 'unknown error' };
        }
        return { offset: end.value };
      },
    });

  const routes: Route[] = [
    {
      method: 'GET',
      pattern: /^\/livez$/,
      auth: false,
      handle: () =>
        bot.state === 'failed' || bot.state === 'stopped'
          ? { status: 503, body: `bot is ${bot.state}\n`, type: 'text' }
          : { status: 200, body: 'ok\n', type: 'text' },
    },
    {
      method: 'GET',
      pattern: /^\/readyz$/,
      auth: false,
      handle: async () => {
        const reason = await readiness();
        return reason === undefined
          ? { status: 200, body: 'ready\n', type: 'text' }
          : { status: 503, body: `${reason}\n`, type: 'text' };
      },
    },
    {
      method: 'GET',
      pattern: /^\/metrics$/,
      auth: false,
      handle: async () => {
        await refreshLedgerEnd();
        return { status: 200, body: await metrics.registry.metrics(), type: 'metrics' };
      },
    },
    {
      method: 'GET',
      pattern: /^\/status$/,
      auth: true,
      handle: async () => {
        await refreshLedgerEnd();
        const m = bot.metrics.snapshot();
        const counts = safe(() => store.countByState());
        return {
          status: 200,
          body: {
            state: bot.state,
            shadow: bot.shadow,
            startedAt: bot.startedAt === undefined ? null : iso(bot.startedAt),
            stream: {
              connected: m.updatesConnected,
              reconnects: m.reconnects.updates,
            },
            checkpoint: bot.checkpoint() ?? null,
            processedOffset: bot.processedOffset() ?? null,
            ledgerEnd: end?.value ?? null,
            lag: lag() ?? null,
            inFlight: m.inFlight,
            waitingForAdmission: m.waitingForAdmission,
            deadLetters: counts?.['dead-lettered'] ?? null,
            intents: counts ?? null,
            rules: bot.ruleStatus().map((r) => ({
              id: r.id,
              revision: r.revision,
              trigger: r.trigger,
              state: r.state,
              ...(r.pausedAt === undefined ? {} : { pausedAt: iso(r.pausedAt) }),
              ...(r.pausedAtOffset === undefined ? {} : { pausedAtOffset: r.pausedAtOffset }),
              file: r.file,
              line: r.line,
              hash: r.hash,
            })),
            recentIntents: bot.recentIntents().slice(0, RECENT).map(recentIntentView),
          },
        };
      },
    },
    {
      method: 'POST',
      pattern: /^\/rules\/reload$/,
      auth: true,
      handle: async () => {
        if (options.reload === undefined) throw notFound('no reload is configured');
        const outcome = await options.reload();
        return outcome.applied
          ? { status: 200, body: { applied: true, diff: outcome.diff } }
          : { status: 422, body: { applied: false, errors: outcome.errors } };
      },
    },
    {
      method: 'POST',
      pattern: /^\/rules\/([^/]+)\/(pause|resume)$/,
      auth: true,
      handle: ([id, action]) => {
        const rule = action === 'pause' ? bot.pauseRule(id!) : bot.resumeRule(id!);
        return { status: 200, body: { rule: ruleBody(rule) } };
      },
    },
    ...journalRoutes({
      bot,
      store,
      clock,
      log,
      ...(options.runSlot === undefined ? {} : { runSlot: options.runSlot }),
    }),
  ];

  const authorised = (req: IncomingMessage): boolean => {
    if (tokenDigest === undefined) return true;
    const header = req.headers.authorization ?? '';
    const m = /^Bearer\s+(.+)$/i.exec(header);
    // Digests of equal length make the comparison constant-time whatever the token's length.
    return m !== null && timingSafeEqual(digest(m[1]!.trim()), tokenDigest);
  };

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
      if (hit.r.auth && !authorised(req)) {
        throw new HttpProblem(401, 'UNAUTHORIZED', 'this endpoint needs the ops bearer token', {
          'www-authenticate': 'Bearer',
        });
      }
      const params = hit.m.slice(1).map((p) => decodeURIComponent(p));
      answer = await hit.r.handle(params, url);
    } catch (err) {
      const p = toProblem(err);
      if (p.status >= 500)
        log.warn({ status: p.status, errorCode: p.code, error: p.message }, 'ops request failed');
      headers = { ...p.headers };
      answer = { status: p.status, body: { error: { code: p.code, message: p.message } } };
    }
    log.debug({ method: req.method, path: url.pathname, status: answer.status }, 'ops request');
    send(res, answer, headers, metrics.registry.contentType);
  };

  const server: Server = createServer((req, res) => {
    req.resume(); // no endpoint reads a body
    void handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  log.info({ url, auth: tokenDigest !== undefined }, 'ops server listening');
  let closing: Promise<void> | undefined;
  return {
    url,
    port: address.port,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        metrics.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function send(
  res: ServerResponse,
  answer: Answer,
  headers: Record<string, string>,
  metricsType: string,
): void {
  const type = answer.type ?? 'json';
  const body = type === 'json' ? `${JSON.stringify(answer.body)}\n` : String(answer.body);
  res.writeHead(answer.status, {
    ...headers,
    'content-type':
      type === 'json'
        ? 'application/json; charset=utf-8'
        : type === 'metrics'
          ? metricsType
          : 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
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

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function safe<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

function ruleBody(r: ReturnType<Bot['ruleStatus']>[number]): Record<string, unknown> {
  return {
    ...r,
    ...(r.pausedAt === undefined ? {} : { pausedAt: iso(r.pausedAt) }),
  };
}
