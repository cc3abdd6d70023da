import type { Logger } from '../../core/logger.js';
import type { Completion, OffsetCheckpoint } from '../wire/wire-types.js';
import type { ResumableStream } from './resumable-stream.js';
import { resumableWsStream } from './resumable-ws-stream.js';
import type { StreamContext, StreamOptions } from './stream-context.js';
import { requireOffset, unwrapCase } from './unwrap-case.js';

/** The completions websocket of both 3.4 and 3.5 (3.5's command-completions is 3.5 only). */
export const COMPLETIONS_PATH = '/v2/commands/completions';
const REQUEST = `WS ${COMPLETIONS_PATH}`;

export type CompletionElement =
  | { readonly kind: 'completion'; readonly offset: number; readonly completion: Completion }
  | { readonly kind: 'checkpoint'; readonly offset: number; readonly checkpoint: OffsetCheckpoint };

export type StreamCompletionsRequest = {
  /** May be omitted with a user token: the participant then uses the token's user. */
  readonly userId?: string | undefined;
  readonly parties: readonly string[];
  readonly beginExclusive: number;
};

/**
 * The completion stream: open-ended, resumed from the offset of the last completion or
 * checkpoint after drops and server closes.
 */
export function streamCompletions(
  ctx: StreamContext,
  request: StreamCompletionsRequest,
  options: StreamOptions = {},
): ResumableStream<CompletionElement> {
  return resumableWsStream(
    ctx,
    {
      name: 'completions',
      path: COMPLETIONS_PATH,
      beginExclusive: request.beginExclusive,
      message: (beginExclusive) => ({
        ...(request.userId === undefined ? {} : { userId: request.userId }),
        parties: [...request.parties],
        beginExclusive,
      }),
      decode: (frame) => decodeCompletion(frame, ctx.logger),
    },
    options,
  );
}

/** Decodes one CompletionStreamResponse frame; `Empty` and unknown kinds are skipped. */
export function decodeCompletion(frame: unknown, logger: Logger): CompletionElement | undefined {
  const response = unwrapCase(frame, 'completionResponse', REQUEST);
  if (response === undefined) return undefined;
  const { kind, value } = response;
  switch (kind) {
    case 'Completion':
      return {
        kind: 'completion',
        offset: requireOffset(value, 'completion', REQUEST),
        completion: value as Completion,
      };
    case 'OffsetCheckpoint':
      return {
        kind: 'checkpoint',
        offset: requireOffset(value, 'checkpoint', REQUEST),
        checkpoint: value as OffsetCheckpoint,
      };
    case 'Empty':
      return undefined;
    default:
      logger.warn(
        { stream: 'completions', responseKind: kind },
        'skipping a completion response of unknown kind',
      );
      return undefined;
  }
}
