import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RawData } from 'ws';
import { renderJsCantonError } from './error-rendering.js';
import { BodyDecodeError } from './request-parsing.js';
import type { SandboxContext } from './sandbox-context.js';
import type { SandboxApiError } from './sandbox-api-error.js';

const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** The JsCantonError of `err`, serialised, with a fresh trace id. */
export function errorJson(s: SandboxContext, err: SandboxApiError): string {
  return JSON.stringify(
    renderJsCantonError(err, {
      participant: s.participantName,
      traceId: s.traceId(),
      correlationId: err.correlationId,
    }),
  );
}

export function sendJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

export function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=UTF-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export function sendBytes(
  res: ServerResponse,
  status: number,
  bytes: Uint8Array,
  headers: Readonly<Record<string, string>>,
): void {
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/octet-stream',
    'content-length': bytes.byteLength,
  });
  res.end(bytes);
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new BodyDecodeError('the body is too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () =>
      resolve(
        chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'),
      ),
    );
    req.on('error', reject);
  });
}

/** The path of a request target, without its query. */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** A websocket message as text, whatever form `ws` delivered it in. */
export function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
