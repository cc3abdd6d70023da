import type { Logger } from '../../core/logger.js';
import type {
  JsReassignment,
  JsTopologyTransaction,
  JsTransaction,
  OffsetCheckpoint,
  UpdateFormat,
} from '../wire/wire-types.js';
import type { ResumableStream } from './resumable-stream.js';
import { resumableWsStream } from './resumable-ws-stream.js';
import type { StreamContext, StreamOptions } from './stream-context.js';
import { requireOffset, unwrapCase } from './unwrap-case.js';

export const UPDATES_PATH = '/v2/updates';
const REQUEST = `WS ${UPDATES_PATH}`;

/** One element of the update stream, unwrapped from its `{"Kind": {"value": …}}` wrapper. */
export type UpdateElement =
  | { readonly kind: 'transaction'; readonly offset: number; readonly transaction: JsTransaction }
  | {
      readonly kind: 'reassignment';
      readonly offset: number;
      readonly reassignment: JsReassignment;
    }
  | { readonly kind: 'checkpoint'; readonly offset: number; readonly checkpoint: OffsetCheckpoint }
  | {
      readonly kind: 'topology';
      readonly offset: number;
      readonly topology: JsTopologyTransaction;
    };

export type StreamUpdatesRequest = {
  readonly beginExclusive: number;
  /** Absent: the stream follows the ledger forever. */
  readonly endInclusive?: number | undefined;
  readonly updateFormat: UpdateFormat;
};

/**
 * The `/v2/updates` websocket, resumed from the last offset after drops and server closes.
 * With `endInclusive` it ends once the range is delivered. `lastOffset` on the result is the
 * offset of the last element yielded, checkpoints included.
 */
export function streamUpdates(
  ctx: StreamContext,
  request: StreamUpdatesRequest,
  options: StreamOptions = {},
): ResumableStream<UpdateElement> {
  const { endInclusive } = request;
  return resumableWsStream(
    ctx,
    {
      name: 'updates',
      path: UPDATES_PATH,
      beginExclusive: request.beginExclusive,
      endInclusive,
      // Both fields always: 3.4 requires updateFormat, 3.5 requires beginExclusive.
      message: (beginExclusive) => ({
        beginExclusive,
        ...(endInclusive === undefined ? {} : { endInclusive }),
        updateFormat: request.updateFormat,
      }),
      decode: (frame) => decodeUpdate(frame, ctx.logger),
    },
    options,
  );
}

/**
 * Decodes one JsGetUpdatesResponse frame. Update kinds this version does not know (a newer
 * participant) are skipped with a warning rather than stopping the bot; a known kind without an
 * offset is a broken frame.
 */
export function decodeUpdate(frame: unknown, logger: Logger): UpdateElement | undefined {
  const update = unwrapCase(frame, 'update', REQUEST);
  if (update === undefined) return undefined;
  const { kind, value } = update;
  switch (kind) {
    case 'Transaction':
      return {
        kind: 'transaction',
        offset: requireOffset(value, 'transaction', REQUEST),
        transaction: value as JsTransaction,
      };
    case 'Reassignment':
      return {
        kind: 'reassignment',
        offset: requireOffset(value, 'reassignment', REQUEST),
        reassignment: value as JsReassignment,
      };
    case 'OffsetCheckpoint':
      return {
        kind: 'checkpoint',
        offset: requireOffset(value, 'checkpoint', REQUEST),
        checkpoint: value as OffsetCheckpoint,
      };
    case 'TopologyTransaction':
      return {
        kind: 'topology',
        offset: requireOffset(value, 'topology transaction', REQUEST),
        topology: value as JsTopologyTransaction,
      };
    default:
      logger.warn({ stream: 'updates', updateKind: kind }, 'skipping an update of unknown kind');
      return undefined;
  }
}
