import { decodeFrames } from './decode-frames.js';
import { ResumableStream } from './resumable-stream.js';
import type { StreamContext, StreamOptions } from './stream-context.js';
import { WsRequestStream } from './ws-request-stream.js';

export type ResumableWsCall<T> = {
  /** Names the stream in logs, e.g. "updates". */
  readonly name: string;
  readonly path: string;
  readonly beginExclusive: number;
  /** Makes the stream bounded (see ResumableStreamOptions.endInclusive). */
  readonly endInclusive?: number | undefined;
  /** The request message of one connection, starting after `beginExclusive`. */
  readonly message: (beginExclusive: number) => unknown;
  /** One frame to an element; undefined skips the frame. */
  readonly decode: (frame: unknown) => T | undefined;
};

/**
 * An offset-ordered websocket call as a ResumableStream: every (re)connect sends `message` for the
 * last offset seen and decodes the frames. The token is retried once after a rejection only when
 * the context has an auth provider.
 */
export function resumableWsStream<T extends { readonly offset: number }>(
  ctx: StreamContext,
  call: ResumableWsCall<T>,
  options: StreamOptions,
): ResumableStream<T> {
  return new ResumableStream<T>({
    name: call.name,
    beginExclusive: call.beginExclusive,
    endInclusive: call.endInclusive,
    offsetOf: (e) => e.offset,
    open: (beginExclusive, signal) =>
      decodeFrames(
        new WsRequestStream(ctx, call.path, call.message(beginExclusive), {
          signal,
          highWaterMark: options.highWaterMark,
          onOpen: options.onOpen,
          onClose: options.onClose,
        }),
        call.decode,
      ),
    clock: ctx.clock,
    random: ctx.random,
    logger: ctx.logger,
    backoff: options.backoff,
    signal: options.signal,
    onReconnect: options.onReconnect,
    retryAuthOnce: ctx.auth !== undefined,
  });
}
