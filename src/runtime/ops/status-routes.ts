import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { GetLedgerApiVersionResponse } from '../../ledger/wire/wire-types.js';
import type { JournalQueries } from '../../store/journal-queries.js';
import type { Store } from '../../store/store.js';
import type { BotLedger } from '../bot-ledger.js';
import type { Bot } from '../bot.js';
import { recentIntentView } from '../intent-view.js';
import { notReadyReason } from './not-ready-reason.js';
import { iso, type Route } from './ops-http.js';
import { createOpsMetrics } from './ops-metrics.js';
import type { RuleRows } from './rule-rows.js';
import type { SubmissionRate } from './submission-rate.js';

/** The participant as the ops server reads it: the ledger end, and what `/status` names. */
export type OpsLedger = Pick<BotLedger, 'ledgerEnd'> & {
  /** `GET /v2/version`, read once the bot runs. */
  version?(options?: { signal?: AbortSignal }): Promise<GetLedgerApiVersionResponse>;
  /** The participant's URL (credentials and query are left out of `/status`). */
  readonly connection?: { readonly url: string };
};

export type StatusDeps = {
  readonly bot: Bot;
  readonly store: Store;
  /** The journal's counts for `/status` and `/metrics`. */
  readonly queries: JournalQueries;
  readonly ledger: OpsLedger;
  readonly clock: Clock;
  readonly log: Logger;
  readonly readOnly: boolean;
  readonly readyMaxLag: number;
  readonly ledgerEndTtlMs: number;
  readonly processMetrics?: boolean;
  readonly waitingFor?: () => string | undefined;
  readonly rules: RuleRows;
  readonly rate: SubmissionRate;
  /** A fleet member's view of its fleet (members, who owns which rule), for `/status`. */
  readonly fleet?: () => Promise<Record<string, unknown>>;
};

export type OpsStatus = {
  readonly routes: Route[];
  /** `/status`'s body; without `rules` and `recentIntents` for the `status` event (`brief`). */
  body(brief: boolean): Promise<Record<string, unknown>>;
  readonly metricsContentType: string;
  close(): void;
};

const RECENT = 50;

/** The health endpoints and `/status` (docs/operations-api.md). */
export function opsStatus(deps: StatusDeps): OpsStatus {
  const { bot, store, clock } = deps;

  let end: { value: number; at: number } | undefined;
  let endError: string | undefined;
  let endRead: Promise<void> | undefined;
  const refreshLedgerEnd = async (): Promise<void> => {
    // The bot has processed past a cached end: the ledger moved on, so read it again.
    const fresh =
      end !== undefined &&
      clock.now() - end.at < deps.ledgerEndTtlMs &&
      (bot.processedOffset() ?? -1) <= end.value;
    if (fresh) return;
    endRead ??= (async () => {
      try {
        const value = await deps.ledger.ledgerEnd({ signal: AbortSignal.timeout(2_000) });
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

  let version: string | undefined;
  let versionRead: Promise<void> | undefined;
  /** The participant's version, read once the bot runs (a failed read is tried again later). */
  const readVersion = async (): Promise<void> => {
    const { ledger } = deps;
    if (version !== undefined || ledger.version === undefined || bot.state !== 'running') return;
    versionRead ??= (async () => {
      try {
        version = (await ledger.version!({ signal: AbortSignal.timeout(2_000) })).version;
      } catch (err) {
        deps.log.debug({ error: (err as Error).message }, 'participant version not read');
      } finally {
        versionRead = undefined;
      }
    })();
    await versionRead;
  };
  const participantUrl = publicUrl(deps.ledger.connection?.url);

  const metrics = createOpsMetrics({
    bot,
    store,
    queries: deps.queries,
    clock,
    ledgerEnd: () => end?.value,
    ...(deps.processMetrics === undefined ? {} : { processMetrics: deps.processMetrics }),
  });

  const readiness = (): Promise<string | undefined> =>
    notReadyReason({
      botState: bot.state,
      waitingFor: deps.waitingFor?.(),
      streamExpected: bot.plan.updateFormat !== null,
      updatesConnected: bot.metrics.updatesConnected,
      updatesProblem: bot.metrics.updatesProblem,
      processedOffset: () => bot.processedOffset(),
      maxLag: deps.readyMaxLag,
      readLedgerEnd: async () => {
        await refreshLedgerEnd();
        if (end === undefined || endError !== undefined) {
          return { error: endError ?? 'unknown error' };
        }
        return { offset: end.value };
      },
    });

  const body = async (brief: boolean): Promise<Record<string, unknown>> => {
    await Promise.all([refreshLedgerEnd(), readVersion()]);
    const notReady = await readiness();
    const m = bot.metrics.snapshot();
    // Undefined once the store is closed.
    const counts = await deps.queries.countByState().catch(() => undefined);
    // A database that does not answer leaves the rest of /status readable (its message may
    // name the database: not shown).
    const fleet =
      deps.fleet === undefined
        ? undefined
        : await deps.fleet().catch(() => ({ error: 'the fleet tables could not be read' }));
    return {
      state: bot.state,
      shadow: bot.shadow,
      readOnly: deps.readOnly,
      startedAt: bot.startedAt === undefined ? null : iso(bot.startedAt),
      participant: { url: participantUrl, version: version ?? null },
      ready: { ok: notReady === undefined, reason: notReady ?? null },
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
      rate: deps.rate.view(),
      ...(fleet === undefined ? {} : { fleet }),
      ...(brief
        ? {}
        : {
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
          }),
    };
  };

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
      handle: async () => ({ status: 200, body: await body(false) }),
    },
  ];
  return {
    routes,
    body,
    metricsContentType: metrics.registry.contentType,
    close: () => metrics.close(),
  };
}

/** The participant's URL without credentials, query or fragment; null when unknown. */
function publicUrl(url: string | undefined): string | null {
  if (url === undefined) return null;
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return null;
  }
}
