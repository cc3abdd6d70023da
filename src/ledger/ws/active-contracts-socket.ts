import { AbortError, throwIfAborted } from '../../core/abort-error.js';
import type {
  GetActiveContractsRequest,
  JsGetActiveContractsResponse,
} from '../wire/wire-types.js';
import {
  DEFAULT_STREAM_BACKOFF,
  describeError,
  logReconnect,
  reconnectable,
  reconnectDelay,
} from './resumable-stream.js';
import type { StreamContext, StreamOptions } from './stream-context.js';
import { isTokenRejected } from '../error-checks.js';
import { badFrame } from './unwrap-case.js';
import { WsRequestStream } from './ws-request-stream.js';

export const ACTIVE_CONTRACTS_PATH = '/v2/state/active-contracts';
const REQUEST = `WS ${ACTIVE_CONTRACTS_PATH}`;

/**
 * The active contract set at `request.activeAtOffset` over the websocket. The stream is finite:
 * it ends when the server closes after the snapshot.
 *
 * A dropped connection is survived only where that cannot lose or repeat contracts: before the
 * first element (the call is simply retried), or when the last element carried a 3.5
 * `streamContinuationToken` (the call is reopened from it). Otherwise the drop is thrown.
 */
export async function* activeContractsSocket(
  ctx: StreamContext,
  request: GetActiveContractsRequest,
  options: StreamOptions = {},
): AsyncGenerator<JsGetActiveContractsResponse, void, undefined> {
  const { signal } = options;
  const policy = options.backoff ?? DEFAULT_STREAM_BACKOFF;
  let token = nonEmpty(request.streamContinuationToken);
  let yieldedAny = false;
  let attempt = 0;
  let authRetried = false;
  for (;;) {
    throwIfAborted(signal);
    const message: GetActiveContractsRequest =
      token === undefined ? request : { ...request, streamContinuationToken: token };
    try {
      const frames = new WsRequestStream(ctx, ACTIVE_CONTRACTS_PATH, message, {
        signal,
        highWaterMark: options.highWaterMark,
      });
      for await (const frame of frames) {
        const element = asResponse(frame);
        // Only the LAST element's token resumes without repeating or skipping contracts.
        token = nonEmpty(element.streamContinuationToken);
        yieldedAny = true;
        attempt = 0;
        authRetried = false;
        yield element;
      }
      return;
    } catch (err) {
      if (err instanceof AbortError) throw err;
      throwIfAborted(signal);
      const resumable = !yieldedAny || token !== undefined;
      let retry = resumable && reconnectable(err);
      if (!retry && resumable && ctx.auth !== undefined && !authRetried && isTokenRejected(err)) {
        authRetried = true;
        retry = true;
      }
      if (!retry) throw err;
      const delayMs = reconnectDelay(policy, attempt, ctx.random, err);
      attempt += 1;
      logReconnect(
        ctx.logger,
        {
          stream: 'active-contracts',
          attempt,
          delayMs,
          resumed: yieldedAny,
          ...describeError(err),
        },
        err,
      );
      options.onReconnect?.(attempt, delayMs, err);
      await ctx.clock.sleep(delayMs, signal);
    }
  }
}

function asResponse(frame: unknown): JsGetActiveContractsResponse {
  if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) {
    throw badFrame(REQUEST, 'a frame that is not a JSON object');
  }
  return frame;
}

function nonEmpty(token: string | null | undefined): string | undefined {
  return typeof token === 'string' && token !== '' ? token : undefined;
}
