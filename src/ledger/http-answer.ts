import { parseJsCantonError, type JsCantonError } from './js-canton-error.js';
import { LedgerApiError } from './ledger-api-error.js';
import { LedgerTransportError } from './ledger-transport-error.js';
import { parseWireJson } from './wire/parse-wire-json.js';

/** How the caller wants the answer read (the fields of HttpRequestOptions that matter here). */
export type AnswerOptions = {
  /** How to read a successful answer (default `json`). */
  readonly accept?: 'json' | 'text' | 'bytes' | undefined;
  /** Non-2xx statuses that are answers rather than errors for this call. */
  readonly okStatuses?: readonly number[] | undefined;
};

/** A status and its body: parsed and decoded JSON for `accept: 'json'`, the text otherwise. */
export type Answer = { readonly status: number; readonly body: unknown };

function contentTypeOf(headers: Record<string, string | string[] | undefined>): string {
  const raw = headers['content-type'];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return (value ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function isJsonType(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

/** Parses through the wire decoder, so every answer has its API nulls dropped (see parseWireJson). */
function tryParseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: parseWireJson(text) };
  } catch {
    return { ok: false };
  }
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}

/**
 * Turns one HTTP answer into the body the caller gets, or the error it stands for: a
 * JsCantonError body becomes a LedgerApiError whatever the status, a plain-text 400 too; any
 * other non-2xx, or a 2xx that is not JSON, is a `bad-response` LedgerTransportError. `scrub`
 * removes the tokens sent from any text that is kept.
 */
export function readAnswer(
  what: string,
  status: number,
  headers: Record<string, string | string[] | undefined>,
  text: string,
  options: AnswerOptions,
  scrub: (s: string) => string,
): Answer {
  const type = contentTypeOf(headers);
  const ok = status >= 200 && status < 300;
  const json = text.trim() === '' ? undefined : tryParseJson(text);
  if (!ok) {
    const error = json?.ok === true ? parseJsCantonError(json.value) : undefined;
    if (error !== undefined) throw new LedgerApiError(scrubError(error, scrub), what, status);
    if (status === 400 && type === 'text/plain') {
      throw LedgerApiError.fromPlainText(scrub(text), what, status);
    }
    if (options.okStatuses?.includes(status) !== true) {
      throw new LedgerTransportError(
        'bad-response',
        what,
        `${what} answered HTTP ${status} (${type === '' ? 'no content type' : type}) without a ` +
          `ledger error body: ${snippet(scrub(text)) || '(empty)'}. Check the URL and any proxy in front ` +
          `of the participant.`,
        { status },
      );
    }
  }
  if (options.accept === 'text') return { status, body: text };
  if (json?.ok !== true || (type !== '' && !isJsonType(type))) {
    throw new LedgerTransportError(
      'bad-response',
      what,
      `${what} answered HTTP ${status} with ${type === '' ? 'no content type' : type} where ` +
        `JSON was expected: ${snippet(scrub(text)) || '(empty)'}. Check the URL and any proxy in front ` +
        `of the participant.`,
      { status },
    );
  }
  return { status, body: json.value };
}

function scrubError(e: JsCantonError, scrub: (s: string) => string): JsCantonError {
  const context: Record<string, string> = {};
  for (const [k, v] of Object.entries(e.context)) context[k] = scrub(v);
  return {
    ...e,
    cause: scrub(e.cause),
    context,
    resources: e.resources.map(([a, b]) => [scrub(a), scrub(b)] as const),
  };
}

/**
 * `readAnswer` for a call that expects bytes (`application/octet-stream`): a 2xx gives them as
 * they are, unless it says it is JSON or text (a proxy's page, not the payload: `bad-response`);
 * any other status is read as text, as `readAnswer` does.
 */
export function readBytesAnswer(
  what: string,
  status: number,
  headers: Record<string, string | string[] | undefined>,
  bytes: Uint8Array,
  options: AnswerOptions,
  scrub: (s: string) => string,
): Answer {
  if (status < 200 || status >= 300) {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
    return readAnswer(what, status, headers, text, { ...options, accept: 'text' }, scrub);
  }
  const type = contentTypeOf(headers);
  if (isJsonType(type) || type.startsWith('text/')) {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
    throw new LedgerTransportError(
      'bad-response',
      what,
      `${what} answered HTTP ${status} with ${type} where bytes (application/octet-stream) were ` +
        `expected: ${snippet(scrub(text)) || '(empty)'}. Check the URL and any proxy in front of ` +
        `the participant.`,
      { status },
    );
  }
  return { status, body: bytes };
}
