import { CelDecimal } from '../../rules/cel/cel-decimal.js';
import { parseDamlDate } from '../../rules/cel/daml-time-text.js';
import { compareDamlValues } from './compare-daml-values.js';
import { formatDamlTime, parseTimestamp } from './daml-time.js';
import type { DamlType } from './model-types.js';
import { formatDamlType } from './parse-daml-type.js';

/** Why a value does not fit its type, in Canton's terms (both are category 8). */
export type ValueProblem = {
  readonly code: 'COMMAND_PREPROCESSING_FAILED' | 'INVALID_ARGUMENT';
  readonly message: string;
};

export type Normalized =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly problem: ValueProblem };

export type NormalizeOptions = {
  /**
   * Round Numerics with more digits than their scale (half-even) instead of rejecting them.
   * For values computed by CEL; values from commands are checked strictly.
   */
  readonly round: boolean;
};

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INT_TEXT = /^[+-]?\d+$/;

const bad = (path: string, message: string): Normalized => ({
  ok: false,
  problem: { code: 'INVALID_ARGUMENT', message: path === '' ? message : `${path}: ${message}` },
});

const describe = (value: unknown): string => {
  if (typeof value === 'bigint') return `${value}`;
  if (value instanceof CelDecimal) return value.toString();
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
};

function entriesOf(value: unknown): [string, unknown][] | null {
  if (value instanceof Map) {
    const out: [string, unknown][] = [];
    for (const [k, v] of value as Map<unknown, unknown>) {
      if (typeof k !== 'string') return null;
      out.push([k, v]);
    }
    return out;
  }
  if (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof Date)
  ) {
    return Object.entries(value);
  }
  return null;
}

/**
 * Checks `value` against `type` and returns its canonical Daml-LF JSON: Int64 and Numeric as
 * strings (Numeric padded to its scale), Date as yyyy-mm-dd, Timestamp as Canton prints values
 * (formatDamlTime), Optional as value-or-null (nested Optionals as arrays), records with fields
 * in declaration order, variants as `{tag, value}`, `Map k v` as sorted `[[k, v], …]`. Accepts
 * both wire JSON and the values CEL produces (bigint, CelDecimal, Date, Map).
 */
export function normalizeDamlValue(
  type: DamlType,
  value: unknown,
  path: string,
  options: NormalizeOptions,
): Normalized {
  const expected = (): Normalized =>
    bad(path, `expected ${formatDamlType(type)}, got ${describe(value)}`);
  switch (type.kind) {
    case 'Party':
    case 'Text':
    case 'ContractId':
      if (typeof value !== 'string') return expected();
      if (type.kind !== 'Text' && value === '') return expected();
      return { ok: true, value };
    case 'Bool':
      return typeof value === 'boolean' ? { ok: true, value } : expected();
    case 'Unit':
      return entriesOf(value)?.length === 0 ? { ok: true, value: {} } : expected();
    case 'Int64': {
      let n: bigint | null = null;
      if (typeof value === 'bigint') n = value;
      else if (typeof value === 'number' && Number.isSafeInteger(value)) n = BigInt(value);
      else if (typeof value === 'string' && INT_TEXT.test(value)) n = BigInt(value);
      if (n === null) return expected();
      if (n < INT64_MIN || n > INT64_MAX) return bad(path, `${n} is out of the Int64 range`);
      return { ok: true, value: n.toString() };
    }
    case 'Numeric': {
      let d: CelDecimal | null = null;
      if (value instanceof CelDecimal) d = value;
      else if (typeof value === 'string') d = CelDecimal.parse(value);
      else if (typeof value === 'number') d = CelDecimal.fromNumber(value);
      else if (typeof value === 'bigint') d = CelDecimal.fromBigInt(value);
      if (d === null) return expected();
      if (!options.round && !d.fitsScale(type.scale)) {
        return bad(path, `${describe(value)} has more than ${type.scale} decimal places`);
      }
      const text = d.toFixed(type.scale);
      if (text.replace(/^-/, '').replace('.', '').replace(/^0+/, '').length > 38) {
        return bad(path, `${describe(value)} has more than 38 digits`);
      }
      return { ok: true, value: text };
    }
    case 'Date': {
      if (value instanceof Date) return { ok: true, value: value.toISOString().slice(0, 10) };
      if (typeof value === 'string' && parseDamlDate(value) !== null) return { ok: true, value };
      return expected();
    }
    case 'Timestamp': {
      if (value instanceof Date)
        return { ok: true, value: formatDamlTime(BigInt(value.getTime()) * 1000n) };
      const micros = typeof value === 'string' ? parseTimestamp(value) : null;
      return micros === null ? expected() : { ok: true, value: formatDamlTime(micros) };
    }
    case 'Enum':
      return typeof value === 'string' && type.constructors.includes(value)
        ? { ok: true, value }
        : expected();
    case 'Optional': {
      if (type.of.kind === 'Optional') return nestedOptional(type, value, path, options);
      if (value === null || value === undefined) return { ok: true, value: null };
      return normalizeDamlValue(type.of, value, path, options);
    }
    case 'List': {
      if (!Array.isArray(value)) return expected();
      const out: unknown[] = [];
      for (let i = 0; i < value.length; i++) {
        const r = normalizeDamlValue(type.of, value[i], `${path}[${i}]`, options);
        if (!r.ok) return r;
        out.push(r.value);
      }
      return { ok: true, value: out };
    }
    case 'TextMap': {
      const entries = entriesOf(value);
      if (entries === null) return expected();
      const out: Record<string, unknown> = {};
      // Sorted, so equal maps have equal canonical text.
      for (const [k, v] of entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        const r = normalizeDamlValue(type.of, v, `${path}.${k}`, options);
        if (!r.ok) return r;
        out[k] = r.value;
      }
      return { ok: true, value: out };
    }
    case 'GenMap':
      return genMap(type, value, path, options);
    case 'Variant': {
      const entries = entriesOf(value);
      const given = entries === null ? null : new Map(entries);
      const tag = given?.get('tag');
      const ctor = type.constructors.find((c) => c.name === tag);
      if (given === null || ctor === undefined) return expected();
      // CEL may leave out the value of a constructor without one (`{"tag": "Nothing"}`).
      const inner = given.has('value') || ctor.type.kind !== 'Unit' ? given.get('value') : {};
      const r = normalizeDamlValue(ctor.type, inner, `${path}.${ctor.name}`, options);
      return r.ok ? { ok: true, value: { tag: ctor.name, value: r.value } } : r;
    }
    case 'Unsupported':
      return bad(path, `the sandbox cannot hold a value of type ${type.text}`);
    case 'Record': {
      const entries = entriesOf(value);
      if (entries === null) return expected();
      const given = new Map(entries);
      const unexpected = [...given.keys()].filter((k) => !type.fields.some((f) => f.name === k));
      if (unexpected.length > 0) {
        return bad(path, `Unexpected fields: ${unexpected.join(', ')}`);
      }
      const missing = type.fields
        .filter((f) => f.type.kind !== 'Optional' && given.get(f.name) === undefined)
        .map((f) => f.name);
      if (missing.length > 0) {
        const message = `Missing non-optional fields: ${missing.join(', ')}`;
        return {
          ok: false,
          problem: {
            code: 'COMMAND_PREPROCESSING_FAILED',
            message: path === '' ? message : `${path}: ${message}`,
          },
        };
      }
      const out: Record<string, unknown> = {};
      for (const f of type.fields) {
        const r = normalizeDamlValue(
          f.type,
          given.get(f.name),
          path === '' ? f.name : `${path}.${f.name}`,
          options,
        );
        if (!r.ok) return r;
        out[f.name] = r.value;
      }
      return { ok: true, value: out };
    }
  }
}

/**
 * `Optional (Optional a)` in Canton's array form, at every level below it too: None `[]`,
 * Some x `[x]` (so Some None is `[[]]`). A null (what CEL yields for None) is None.
 */
function nestedOptional(
  type: DamlType & { readonly kind: 'Optional' },
  value: unknown,
  path: string,
  options: NormalizeOptions,
): Normalized {
  if (value === null || value === undefined) return { ok: true, value: [] };
  if (!Array.isArray(value)) {
    return bad(path, `expected ${formatDamlType(type)}, got ${describe(value)}`);
  }
  if (value.length === 0) return { ok: true, value: [] };
  const r =
    type.of.kind === 'Optional'
      ? nestedOptional(type.of, value[0], `${path}[0]`, options)
      : normalizeDamlValue(type.of, value[0], `${path}[0]`, options);
  return r.ok ? { ok: true, value: [r.value] } : r;
}

/**
 * `Map k v`: from the wire's `[[k, v], …]` (or a CEL map), as Daml holds it: keys in Daml's
 * order, each once (the last entry of a key wins, as the engine builds it).
 */
function genMap(
  type: DamlType & { readonly kind: 'GenMap' },
  value: unknown,
  path: string,
  options: NormalizeOptions,
): Normalized {
  let pairs: [unknown, unknown][];
  if (value instanceof Map) pairs = [...(value as Map<unknown, unknown>)];
  else if (Array.isArray(value) && value.every((e) => Array.isArray(e) && e.length === 2))
    pairs = value as [unknown, unknown][];
  else
    return bad(
      path,
      `expected ${formatDamlType(type)} as [[key, value], …], got ${describe(value)}`,
    );
  const byKey = new Map<string, [unknown, unknown]>();
  for (let i = 0; i < pairs.length; i++) {
    const [k, v] = pairs[i]!;
    const key = normalizeDamlValue(type.key, k, `${path}[${i}][0]`, options);
    if (!key.ok) return key;
    const val = normalizeDamlValue(type.value, v, `${path}[${i}][1]`, options);
    if (!val.ok) return val;
    byKey.set(canonicalText(key.value), [key.value, val.value]);
  }
  const sorted = [...byKey.values()].sort((a, b) => compareDamlValues(type.key, a[0], b[0]));
  return { ok: true, value: sorted };
}

/** A canonical text for equality of normalised values (key lookup). */
export function canonicalText(value: unknown): string {
  return JSON.stringify(value);
}
