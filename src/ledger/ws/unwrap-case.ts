import { LedgerTransportError } from '../ledger-transport-error.js';

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Reads a oneOf field encoded as a single-key wrapper with a `value` level (NOTES.md §0.3), e.g.
 * `frame.update = {"Transaction": {"value": {...}}}` → `{kind: "Transaction", value: {...}}`.
 * Returns undefined when the field is absent; throws when it is not shaped like a wrapper.
 */
export function unwrapCase(
  frame: unknown,
  field: string,
  request: string,
): { kind: string; value: JsonObject } | undefined {
  if (!isObject(frame)) throw badFrame(request, 'a frame that is not a JSON object');
  const wrapper = frame[field];
  if (wrapper === undefined || wrapper === null) return undefined;
  if (!isObject(wrapper)) throw badFrame(request, `a frame whose "${field}" is not an object`);
  const keys = Object.keys(wrapper);
  const kind = keys[0];
  if (keys.length !== 1 || kind === undefined) {
    throw badFrame(request, `a frame whose "${field}" has ${keys.length} cases instead of one`);
  }
  const inner = wrapper[kind];
  if (!isObject(inner)) throw badFrame(request, `a "${field}.${kind}" that is not an object`);
  const value = inner.value;
  // The `{}` cases (e.g. completions' Empty) carry no value level.
  return { kind, value: isObject(value) ? value : inner };
}

/** The `offset` of a decoded element, which every stream element must carry. */
export function requireOffset(value: JsonObject, what: string, request: string): number {
  const offset = value.offset;
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) {
    throw badFrame(request, `a ${what} without a valid offset`);
  }
  return offset;
}

export function badFrame(request: string, what: string): LedgerTransportError {
  return new LedgerTransportError(
    'bad-response',
    request,
    `${request}: the participant sent ${what}`,
  );
}
