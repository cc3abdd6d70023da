// Live updates: the server's event stream (GET /events, Server-Sent Events). The page does not
// poll while the stream is up. A server without the stream, a stream that keeps failing, or one
// that has sent no status for 20 seconds (it sends one at least every 15) is polled every
// 5 seconds instead, until the stream speaks again.
import { get } from './api.js';
import type { IntentView, LastReload, RuleRow, Status } from './types.js';

export type LiveHandlers = {
  readonly status: (status: Status) => void;
  readonly intents: (intents: readonly IntentView[], truncated: boolean) => void;
  /** The rows that changed; `removed`: a rule is gone too (the page fetches the table again). */
  readonly rules: (rules: readonly RuleRow[], removed: boolean) => void;
  readonly reload: (last: LastReload) => void;
  /** A poll round without the stream: the screens refetch what they show. */
  readonly poll: () => void;
  /** 'live' while the stream is open, 'polling' without it, 'offline' when nothing answers. */
  readonly connection: (state: 'live' | 'polling' | 'offline') => void;
};

const POLL_MS = 5000;
const SILENT_MS = 20_000;

export function startLive(on: LiveHandlers): () => void {
  let source: EventSource | undefined;
  let poller: ReturnType<typeof setInterval> | undefined;
  let failures = 0;
  let lastStatus = Date.now();

  const poll = async (): Promise<void> => {
    try {
      on.status(await get<Status>('/status'));
      on.connection('polling');
      on.poll();
    } catch {
      on.connection('offline');
    }
  };
  const startPolling = (): void => {
    if (poller !== undefined) return;
    void poll();
    poller = setInterval(() => void poll(), POLL_MS);
  };
  const stopPolling = (): void => {
    if (poller !== undefined) clearInterval(poller);
    poller = undefined;
  };

  const parse = (event: Event): unknown => JSON.parse((event as MessageEvent<string>).data);

  source = new EventSource('/events');
  source.addEventListener('open', () => {
    failures = 0;
    // Polling (if it was on) stops at the stream's first status, not here: a stream can open
    // and then say nothing.
    if (poller === undefined) on.connection('live');
  });
  source.addEventListener('error', () => {
    failures += 1;
    // The browser reconnects by itself (the server's `retry`); after a few failures in a row the
    // status is polled meanwhile, so the page stays current against a bot without the stream.
    if (failures >= 3 || source?.readyState === EventSource.CLOSED) startPolling();
    if (source?.readyState === EventSource.CLOSED) on.connection('offline');
  });
  source.addEventListener('status', (e) => {
    lastStatus = Date.now();
    if (poller !== undefined) {
      stopPolling();
      on.connection('live');
    }
    on.status(parse(e) as Status);
  });
  const watchdog = setInterval(() => {
    if (Date.now() - lastStatus > SILENT_MS) startPolling();
  }, POLL_MS);
  source.addEventListener('intents', (e) => {
    const body = parse(e) as { intents: IntentView[]; truncated?: boolean };
    on.intents(body.intents, body.truncated === true);
  });
  source.addEventListener('rules', (e) => {
    const body = parse(e) as { rules: RuleRow[]; removed?: boolean };
    on.rules(body.rules, body.removed === true);
  });
  source.addEventListener('reload', (e) => on.reload(parse(e) as LastReload));

  return () => {
    clearInterval(watchdog);
    source?.close();
    source = undefined;
    stopPolling();
  };
}

/** Calls `fn` at most once per `ms`, the last call winning (lists refetched on events). */
export function debounced(fn: () => void, ms = 1000): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let last = 0;
  return () => {
    if (timer !== undefined) return;
    const wait = Math.max(0, last + ms - Date.now());
    timer = setTimeout(() => {
      timer = undefined;
      last = Date.now();
      fn();
    }, wait);
  };
}
