import type { ServerResponse } from 'node:http';
import type { Clock, TimerHandle } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { Bot } from '../bot.js';
import type { IntentEvent } from '../in-flight-intents.js';
import { intentView } from '../intent-view.js';
import { HttpProblem, STREAMED, type Route } from './ops-http.js';
import type { ReloadHistory } from './reload-history.js';
import type { RuleRows } from './rule-rows.js';

/** The bounds of `GET /events` (docs/operations-api.md). */
export const EVENT_STREAM_LIMITS = {
  /** Streams open at once; one more is refused with 503. */
  maxStreams: 32,
  /** Changed intents are gathered this long, then sent in one message. */
  intentsEveryMs: 250,
  /** At most this many intents per message (then `truncated: true`: the page refetches). */
  maxIntents: 200,
  /** `status` and `rules` are looked at this often, and sent when they changed. */
  tickMs: 1000,
  /** `status` is sent at least this often, and a keep-alive comment too. */
  heartbeatMs: 15_000,
  /** A client whose unsent data pass this is dropped, never buffered without bound. */
  maxBufferedBytes: 1024 * 1024,
} as const;

export type EventStreamLimits = { readonly [K in keyof typeof EVENT_STREAM_LIMITS]: number };

export type EventStreamDeps = {
  readonly bot: Bot;
  readonly clock: Clock;
  readonly log: Logger;
  readonly rows: RuleRows;
  readonly reloads: ReloadHistory;
  /** `/status` without `rules` and `recentIntents`. */
  readonly status: () => Promise<Record<string, unknown>>;
  readonly limits?: Partial<EventStreamLimits>;
};

export type EventStream = {
  readonly route: Route;
  /** Ends every stream and stops observing the bot. */
  close(): void;
};

/**
 * `GET /events`: Server-Sent Events of the bot's changes for the console. One hub for every
 * stream: it observes the bot only while a stream is open, gathers intent changes (the newest
 * state per commandId), and looks at the status and the rules once a second, sending what
 * changed to every stream.
 */
export function eventStream(deps: EventStreamDeps): EventStream {
  const { bot, clock, rows } = deps;
  const limits = { ...EVENT_STREAM_LIMITS, ...deps.limits };
  const streams = new Set<ServerResponse>();
  const changed = new Map<string, IntentEvent['record']>();
  let intentsTimer: TimerHandle | undefined;
  let tickTimer: TimerHandle | undefined;
  let lastStatus = '';
  let lastStatusAt = 0;
  let lastBeatAt = 0;
  let lastRows = new Map<string, string>();
  let ticking = false;

  const drop = (res: ServerResponse): void => {
    if (!streams.delete(res)) return;
    res.destroy();
    if (streams.size === 0) stop();
  };
  /** Writes to one stream; a stream that has buffered too much is dropped. */
  const write = (res: ServerResponse, text: string): void => {
    if (res.destroyed) return drop(res);
    res.write(text);
    if (res.writableLength > limits.maxBufferedBytes) {
      deps.log.warn(
        { buffered: res.writableLength },
        'ops event stream dropped: the client reads too slowly',
      );
      drop(res);
    }
  };
  const broadcast = (event: string, data: unknown): void => {
    const text = message(event, data);
    for (const res of [...streams]) write(res, text);
  };

  const flushIntents = (): void => {
    intentsTimer = undefined;
    if (changed.size === 0) return;
    const records = [...changed.values()];
    changed.clear();
    const truncated = records.length > limits.maxIntents;
    const newest = records.sort((a, b) => b.updatedAt - a.updatedAt).slice(0, limits.maxIntents);
    broadcast('intents', { intents: newest.map(intentView), ...(truncated ? { truncated } : {}) });
  };
  const onIntent = (e: IntentEvent): void => {
    changed.delete(e.commandId);
    changed.set(e.commandId, e.record);
    intentsTimer ??= clock.setTimeout(flushIntents, limits.intentsEveryMs);
  };
  const onReload = (): void => {
    // A reload changes the rules table at once (not at the next tick).
    sendRules();
  };
  const stopReloads = { fn: (): void => {} };

  const sendRules = (): void => {
    const now = new Map<string, string>();
    const send = [];
    for (const row of rows.rows()) {
      const text = JSON.stringify(row);
      now.set(row.id, text);
      if (lastRows.get(row.id) !== text) send.push(row);
    }
    const removed = [...lastRows.keys()].some((id) => !now.has(id));
    lastRows = now;
    if (send.length > 0 || removed)
      broadcast('rules', { rules: send, ...(removed ? { removed: true } : {}) });
  };
  const sendStatus = async (force: boolean): Promise<void> => {
    const body = JSON.stringify(await deps.status());
    if (!force && body === lastStatus && clock.now() - lastStatusAt < limits.heartbeatMs) return;
    lastStatus = body;
    lastStatusAt = clock.now();
    for (const res of [...streams]) write(res, `event: status\ndata: ${body}\n\n`);
  };
  const tick = async (): Promise<void> => {
    tickTimer = undefined;
    if (streams.size === 0) return;
    if (!ticking) {
      ticking = true;
      try {
        await sendStatus(false);
        sendRules();
        if (clock.now() - lastBeatAt >= limits.heartbeatMs) {
          lastBeatAt = clock.now();
          for (const res of [...streams]) write(res, ': keep-alive\n\n');
        }
      } catch (err) {
        deps.log.warn({ error: (err as Error).message }, 'ops event stream tick failed');
      } finally {
        ticking = false;
      }
    }
    if (streams.size > 0) tickTimer = clock.setTimeout(() => void tick(), limits.tickMs);
  };

  const start = (): void => {
    bot.events.on('intent', onIntent);
    bot.events.on('reload', onReload);
    stopReloads.fn = deps.reloads.subscribe((record) => broadcast('reload', record));
    lastRows = new Map(rows.rows().map((r) => [r.id, JSON.stringify(r)]));
    lastBeatAt = clock.now();
    tickTimer = clock.setTimeout(() => void tick(), limits.tickMs);
  };
  const stop = (): void => {
    bot.events.off('intent', onIntent);
    bot.events.off('reload', onReload);
    stopReloads.fn();
    if (intentsTimer !== undefined) clock.clearTimeout(intentsTimer);
    if (tickTimer !== undefined) clock.clearTimeout(tickTimer);
    intentsTimer = undefined;
    tickTimer = undefined;
    changed.clear();
  };

  const route: Route = {
    method: 'GET',
    pattern: /^\/events$/,
    auth: true,
    handle: async (_params, _url, { res }) => {
      if (streams.size >= limits.maxStreams) {
        throw new HttpProblem(
          503,
          'TOO_MANY_STREAMS',
          `at most ${limits.maxStreams} event streams at once; close one (another console tab?)`,
        );
      }
      const first = streams.size === 0;
      streams.add(res);
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        connection: 'keep-alive',
      });
      res.socket?.setNoDelay(true);
      const gone = (): void => drop(res);
      // The response's close, not the request's: that one comes once its (empty) body is read.
      res.on('close', gone);
      res.on('error', gone);
      if (first) start();
      write(res, 'retry: 2000\n\n');
      const body = JSON.stringify(await deps.status());
      if (streams.has(res)) write(res, `event: status\ndata: ${body}\n\n`);
      return STREAMED;
    },
  };
  return {
    route,
    close: () => {
      for (const res of [...streams]) {
        streams.delete(res);
        res.end();
      }
      stop();
    },
  };
}

function message(event: string, data: unknown): string {
  // JSON.stringify escapes line breaks inside strings, so `data` is one line.
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
