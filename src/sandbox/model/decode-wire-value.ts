import { parseDamlDate } from '../../rules/cel/daml-time-text.js';
import type { DamlType } from './model-types.js';
import { formatDamlTime, parseTimestamp } from './daml-time.js';

/**
 * Why Canton's JSON layer refuses a Daml value of a command, by what its transcoder throws
 * (`JsonCodec`, 3.5) and how `Endpoints.handleError` answers it:
 * - `missing-fields` (MissingFieldsException): 400 COMMAND_PREPROCESSING_FAILED;
 * - `unexpected-fields` (UnexpectedFieldsException): 400 INVALID_ARGUMENT;
 * - `illegal-argument` (IllegalArgumentException, e.g. NumberFormatException, and
 *   IncorrectVariantRepresentationException: a variant without `tag` and `value`, an unknown
 *   tag): 400 INVALID_ARGUMENT;
 * - `nesting`: a value nested deeper than Daml-LF's 100 levels, which the engine's preprocessor
 *   refuses (400 COMMAND_PREPROCESSING_FAILED); read here so that hostile depth never recurses;
 * - `internal` (any other exception: a JSON value of the wrong kind, an Int64 given as a number, a
 *   bad date or time, an unknown enum constructor, a GenMap entry that is not a pair):
 *   500 LEDGER_API_INTERNAL_ERROR.
 */
export type WireValueFailure =
  | { readonly kind: 'missing-fields'; readonly fields: readonly string[] }
  | { readonly kind: 'unexpected-fields'; readonly fields: readonly string[] }
  | { readonly kind: 'illegal-argument'; readonly message: string }
  | { readonly kind: 'nesting'; readonly message: string }
  | {
      readonly kind: 'internal';
      readonly message: string;
      /** The Java class of the exception, for the error's `throwableO` context. */
      readonly exception: string;
    };

export type WireDecoded =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly failure: WireValueFailure };

class Refused extends Error {
  constructor(readonly failure: WireValueFailure) {
    super(failure.kind);
  }
}

const INVALID_DATA = 'ujson.Value$InvalidData';
const PARSE_EXCEPTION = 'java.time.format.DateTimeParseException';
const INT64_TEXT = /^[+-]?\d+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** Daml-LF's `Value.MAXIMUM_NESTING`. */
const MAX_VALUE_NESTING = 100;

/** ujson renders the value it refused into the message. */
function render(v: unknown): string {
  return v === undefined ? 'null' : (JSON.stringify(v) ?? 'null');
}

function invalidData(expected: string, v: unknown): never {
  throw new Refused({
    kind: 'internal',
    message: `Expected ujson.${expected} (data: ${render(v)})`,
    exception: INVALID_DATA,
  });
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : invalidData('Str', v);
}

function arr(v: unknown): readonly unknown[] {
  return Array.isArray(v) ? v : invalidData('Arr', v);
}

function obj(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : invalidData('Obj', v);
}

function unparsable(text: string, detail: string): never {
  throw new Refused({
    kind: 'internal',
    message: `Text '${text}' could not be parsed${detail}`,
    exception: PARSE_EXCEPTION,
  });
}

/** Java's Double.toString for the numbers a Numeric may come as (then parsed as text). */
function javaDouble(n: number): string {
  return Number.isInteger(n) && Math.abs(n) < 1e7 ? `${n}.0` : String(n);
}

function int64(v: unknown): string {
  const text = str(v);
  // Long.parseLong: NumberFormatException, an IllegalArgumentException.
  const n = INT64_TEXT.test(text) ? BigInt(text) : null;
  if (n === null || n < INT64_MIN || n > INT64_MAX) {
    throw new Refused({ kind: 'illegal-argument', message: `For input string: "${text}"` });
  }
  return n.toString();
}

function date(v: unknown): string {
  const text = str(v);
  if (/^\d{4}-\d{2}-\d{2}$/.test(text) && parseDamlDate(text) !== null) return text;
  const head = text.slice(0, 10);
  return /^\d{4}-\d{2}-\d{2}$/.test(head) && parseDamlDate(head) !== null
    ? unparsable(text, ', unparsed text found at index 10')
    : unparsable(text, ' at index 0');
}

function timestamp(v: unknown): string {
  const text = str(v);
  const micros = parseTimestamp(text);
  return micros === null ? unparsable(text, ' at index 0') : formatDamlTime(micros);
}

function record(
  fields: readonly { name: string; type: DamlType }[],
  v: unknown,
  depth: number,
): unknown {
  const given = obj(v);
  const missing = fields
    .filter((f) => f.type.kind !== 'Optional' && !Object.hasOwn(given, f.name))
    .map((f) => f.name);
  if (missing.length > 0) throw new Refused({ kind: 'missing-fields', fields: missing });
  const unexpected = Object.keys(given).filter(
    (k) => given[k] !== null && !fields.some((f) => f.name === k),
  );
  if (unexpected.length > 0) throw new Refused({ kind: 'unexpected-fields', fields: unexpected });
  const out: Record<string, unknown> = {};
  for (const f of fields) out[f.name] = decode(f.type, given[f.name] ?? null, depth);
  return out;
}

/** `Optional (Optional a)`: an array at this level and every Optional level below it. */
function nestedOptional(
  type: DamlType & { readonly kind: 'Optional' },
  v: unknown,
  depth: number,
): unknown {
  const items = arr(v);
  if (items.length === 0) return [];
  return [
    type.of.kind === 'Optional'
      ? nestedOptional(type.of, items[0], depth + 1)
      : decode(type.of, items[0], depth + 1),
  ];
}

function variant(
  type: DamlType & { readonly kind: 'Variant' },
  v: unknown,
  depth: number,
): unknown {
  const o =
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : null;
  if (o === null || !Object.hasOwn(o, 'tag') || !Object.hasOwn(o, 'value')) {
    throw new Refused({
      kind: 'illegal-argument',
      message: "Variant type json must have 'tag' and 'value' fields.",
    });
  }
  const tag = str(o.tag);
  const ctor = type.constructors.find((c) => c.name === tag);
  if (ctor === undefined) {
    throw new Refused({ kind: 'illegal-argument', message: `Unexpected variant tag: ${tag}` });
  }
  return { tag, value: decode(ctor.type, o.value, depth) };
}

/** ujson's `arr(i)` past the end: Scala's ArrayBuffer IndexOutOfBoundsException. */
function pairItem(pair: readonly unknown[], i: number): unknown {
  if (i < pair.length) return pair[i];
  throw new Refused({
    kind: 'internal',
    message: `${i} is out of bounds (min 0, max ${pair.length - 1})`,
    exception: 'java.lang.IndexOutOfBoundsException',
  });
}

function decode(type: DamlType, v: unknown, outer: number): unknown {
  const depth = outer + 1;
  if (depth > MAX_VALUE_NESTING) {
    throw new Refused({
      kind: 'nesting',
      message: `Provided value exceeds maximum nesting level of ${MAX_VALUE_NESTING}`,
    });
  }
  switch (type.kind) {
    case 'Party':
    case 'Text':
    case 'ContractId':
      return str(v);
    case 'Bool':
      return typeof v === 'boolean' ? v : invalidData('Bool', v);
    case 'Unit':
      // Canton's codec does not look at a Unit's JSON at all.
      return {};
    case 'Int64':
      return int64(v);
    case 'Numeric':
      if (typeof v === 'number') return javaDouble(v);
      if (typeof v === 'string') return v;
      throw new Refused({
        kind: 'illegal-argument',
        message: `${render(v)} is not a valid numeric value`,
      });
    case 'Date':
      return date(v);
    case 'Timestamp':
      return timestamp(v);
    case 'Enum': {
      const ctor = str(v);
      if (type.constructors.includes(ctor)) return ctor;
      throw new Refused({
        kind: 'internal',
        message: `Unexpected case: ${ctor}`,
        exception: 'java.lang.Exception',
      });
    }
    case 'Optional':
      if (type.of.kind === 'Optional') return nestedOptional(type, v, depth);
      return v === null || v === undefined ? null : decode(type.of, v, depth);
    case 'List':
      return arr(v).map((x) => decode(type.of, x, depth));
    case 'TextMap': {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(obj(v))) out[k] = decode(type.of, x, depth);
      return out;
    }
    case 'GenMap':
      return arr(v).map((entry) => {
        const pair = arr(entry);
        const key = decode(type.key, pairItem(pair, 0), depth);
        return [key, decode(type.value, pairItem(pair, 1), depth)];
      });
    case 'Record':
      return record(type.fields, v, depth);
    case 'Variant':
      return variant(type, v, depth);
    case 'Unsupported':
      // What Canton's codec does for a type it has no codec for.
      throw new Refused({
        kind: 'internal',
        message: 'Failed to decode payload of unknown type',
        exception: 'java.lang.RuntimeException',
      });
  }
}

/**
 * Reads a Daml value of a command from its JSON as Canton 3.5's JSON layer does, before anything
 * else looks at the command: Int64 from strings only, Numeric from strings or numbers, nested
 * Optionals as arrays, a missing Optional field as None, null-valued unknown fields ignored.
 * The result is Daml-LF JSON for normalizeDamlValue, which still checks what the ledger checks
 * later (Numeric scale, party ids, ...).
 */
export function decodeWireValue(type: DamlType, json: unknown): WireDecoded {
  try {
    // The outermost value is at level 0, as in the engine's preprocessor.
    return { ok: true, value: decode(type, json, -1) };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, failure: error.failure };
    throw error;
  }
}

/** Scala's `Set(a, b)`, as MissingFieldsException's set prints in the error. */
export function scalaSet(items: readonly string[]): string {
  return `Set(${items.join(', ')})`;
}
