import type { RouteResult } from './route-table.js';
import { BodyDecodeError } from './request-parsing.js';
import type { SandboxContext } from './sandbox-context.js';
import { SandboxApiError } from './sandbox-api-error.js';
import type { OpenedStream, StreamSink } from './paced-send.js';

function queryInt(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isInteger(n)) {
    throw new BodyDecodeError(`query parameter ${name}`);
  }
  return n;
}

/**
 * The HTTP list variant of a stream (NOTES.md §3): at most `min(limit, max+1)` elements; more than
 * `max` is a 413. The idle cut-off applies, as in Canton's `asList`, to an open-ended stream and
 * to any stream given `stream_idle_timeout_ms`: the list ends when no element came for that long
 * (or the list wait time) since the stream started or since its last element, whether the stream
 * was still sending its backlog or following the ledger. A bounded stream without the parameter
 * ends with its last element, however long its backlog takes.
 */
export function collectList(
  ctx: SandboxContext,
  query: URLSearchParams,
  signal: AbortSignal,
  open: (sink: StreamSink) => OpenedStream,
): Promise<RouteResult> {
  const limit = queryInt(query, 'limit');
  const idleGiven = queryInt(query, 'stream_idle_timeout_ms');
  const idleMs = idleGiven ?? ctx.limits.listWaitMs;
  const max = ctx.limits.listMaxElements;
  const cap = Math.max(0, Math.min(limit ?? max + 1, max + 1));
  const frames: string[] = [];
  return new Promise<RouteResult>((resolve, reject) => {
    let done = false;
    /** Whether the idle cut-off applies: known once the stream opened. */
    let cutOff = false;
    let stream: OpenedStream | undefined;
    let timer: ReturnType<SandboxContext['clock']['setTimeout']> | undefined;
    /** Ends the collection; false if it had ended already. */
    const close = (): boolean => {
      if (done) return false;
      done = true;
      if (timer !== undefined) ctx.clock.clearTimeout(timer);
      stream?.cancel();
      signal.removeEventListener('abort', finish);
      return true;
    };
    const finish = (): void => {
      if (!close()) return;
      if (frames.length > max) {
        const err = new SandboxApiError(
          'JSON_API_MAXIMUM_LIST_ELEMENTS_NUMBER_REACHED',
          `The number of matching elements (${frames.length}) is greater than the node limit (${max}).`,
          { httpStatus: 413, jsonLayer: true },
        );
        reject(err);
        return;
      }
      resolve({ status: 200, json: `[${frames.join(',')}]` });
    };
    const arm = (): void => {
      if (timer !== undefined) ctx.clock.clearTimeout(timer);
      timer = ctx.clock.setTimeout(finish, idleMs);
    };
    const sink: StreamSink = {
      send: (frame) => {
        if (done) return;
        if (frames.length < cap) frames.push(frame);
        if (frames.length >= cap) finish();
        else if (cutOff) arm();
      },
      drop: finish,
      wantsMore: () => !done && frames.length < cap,
    };
    try {
      stream = open(sink);
    } catch (err) {
      done = true;
      reject(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    if (done) {
      stream.cancel();
      return;
    }
    const opened = stream;
    signal.addEventListener('abort', finish, { once: true });
    // The first turn ran within `open`: the wait counts from now, the stream's start.
    cutOff = opened.openEnded || idleGiven !== undefined;
    if (cutOff) arm();
    opened.sent.then(
      () => {
        if (!done && !opened.openEnded) finish();
      },
      (err: unknown) => {
        if (close()) reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
