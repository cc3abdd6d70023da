import type { IncomingMessage } from 'node:http';
import { parseJsCantonError } from '../js-canton-error.js';
import { LedgerApiError } from '../ledger-api-error.js';
import { LedgerTransportError } from '../ledger-transport-error.js';
import { parseWireJson } from '../wire/parse-wire-json.js';
import { safeOrigin } from './ws-url.js';

/** Enough for any JsCantonError; a bigger rejection body is a proxy page we only describe. */
const MAX_REJECTION_BODY_BYTES = 64 * 1024;

/**
 * Reads the body of a refused websocket upgrade (at most 64 KiB of it, within `timeoutMs`) and
 * hands `decide` the status and the text, once, however the response ends.
 */
export function readRejection(
  res: IncomingMessage,
  timeoutMs: number,
  decide: (status: number, body: string) => void,
): void {
  const status = res.statusCode ?? 0;
  const chunks: Buffer[] = [];
  let size = 0;
  let decided = false;
  const end = (): void => {
    if (decided) return;
    decided = true;
    decide(status, Buffer.concat(chunks).toString('utf8'));
  };
  res.on('data', (chunk: Buffer) => {
    if (size < MAX_REJECTION_BODY_BYTES) chunks.push(chunk);
    size += chunk.length;
  });
  res.on('end', end);
  res.on('close', end);
  res.on('error', end);
  res.setTimeout(timeoutMs, () => res.destroy());
}

/** A refused upgrade: the JsCantonError of its body, else what the status suggests to check. */
export function rejectionError(request: string, status: number, body: string): Error {
  let parsed: unknown;
  try {
    parsed = parseWireJson(body);
  } catch {
    parsed = undefined;
  }
  const error = parseJsCantonError(parsed);
  if (error !== undefined) return new LedgerApiError(error, request, status);
  const hint =
    status === 404
      ? '; check the URL and its path prefix'
      : status === 401 || status === 403
        ? '; check the token and the user rights'
        : '';
  return new LedgerTransportError(
    'bad-response',
    request,
    `${request}: the participant answered HTTP ${status} instead of opening a websocket${hint}`,
    { status },
  );
}

/** A socket error before the socket opened: a slow handshake, or no connection at all. */
export function openError(
  request: string,
  err: Error,
  handshakeTimeoutMs: number,
  url: string,
): LedgerTransportError {
  const timedOut = err.message.includes('handshake has timed out');
  return new LedgerTransportError(
    timedOut ? 'timeout' : 'connect',
    request,
    timedOut
      ? `${request}: the websocket handshake timed out after ${handshakeTimeoutMs} ms`
      : `${request}: cannot open a websocket to ${safeOrigin(url)}: ${err.message}`,
    { cause: err },
  );
}

/**
 * How a close ends the stream: undefined for a normal close (1000, or a close frame without a
 * code) of an open socket, an error for a socket that never opened or closed abnormally.
 */
export function closeError(
  request: string,
  opened: boolean,
  code: number,
  reason: Buffer,
  cause: Error | undefined,
): LedgerTransportError | undefined {
  if (!opened) {
    return new LedgerTransportError(
      'connect',
      request,
      `${request}: the websocket closed before it opened (code ${code})`,
      { cause },
    );
  }
  if (code === 1000 || code === 1005) return undefined;
  const text = reason.toString('utf8');
  return new LedgerTransportError(
    'closed',
    request,
    `${request}: the websocket closed abnormally (code ${code}${text === '' ? '' : `, ${text}`})`,
    { cause },
  );
}
