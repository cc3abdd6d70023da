import { Optional } from '@marcbachmann/cel-js';
import { CelDecimal } from './cel/cel-decimal.js';
import { DAML_DATE_RANGE, damlDateText, damlTimeText } from './cel/daml-time-text.js';
import type { DamlRendering, JsonValue } from './compiled-rule.js';
import { INT64_MAX, INT64_MIN } from './daml-literals.js';

/**
 * A CEL value written as the Daml type of its command field reads it (the `rendering` that
 * daml-rendering.ts resolved when the rule was loaded): a timestamp in a Date as its UTC day
 * `yyyy-mm-dd` (Canton 3.5 refuses a timestamp there with HTTP 500), in a Time as Canton prints
 * Times (`…:00Z`, `…:00.5Z`); an int, uint, double or decimal in an Int as a whole number (a
 * fraction, or more than 64 bits, fails), in a `Numeric n` with n places, rounded half-even as
 * Daml rounds (more than 38 digits fails); containers part by part. render-value.ts renders
 * everything else, and text (what the ledger sent) as it is.
 */

/** What typedJson needs from the renderer of the whole value. */
export type TypedJsonContext = {
  /** Throws the renderer's failure for the expression being rendered. */
  readonly fail: (message: string) => never;
  /** Renders a part of the value (one level deeper), as `as` says (untyped when undefined). */
  readonly part: (value: unknown, as: DamlRendering | undefined) => JsonValue;
  /** Renders the value itself as `as` says (an Optional's content). */
  readonly same: (value: unknown, as: DamlRendering) => JsonValue;
};

/**
 * `value` written as `as` reads it; undefined when `as` changes nothing for it (text, a value of
 * another kind: the caller sends it as any value, and the participant says what is wrong).
 */
export function typedJson(
  value: unknown,
  as: DamlRendering,
  ctx: TypedJsonContext,
): JsonValue | undefined {
  const { fail } = ctx;
  switch (as.kind) {
    case 'Date':
    case 'Time': {
      if (!(value instanceof Date)) return undefined;
      const text = as.kind === 'Date' ? damlDateText(value) : damlTimeText(value);
      return text ?? fail(`${timeOf(value)} is outside the Daml ${as.kind}s: ${DAML_DATE_RANGE}`);
    }
    case 'Int': {
      const n = exactNumber(value, fail);
      if (n === undefined) return undefined;
      if (!n.isInteger()) {
        return fail(`${n.toString()} has a fraction, and the field is an Int: give a whole number`);
      }
      // toFixed: plain digits, where toString writes an exponent past 1e100 (BigInt reads none).
      const text = n.toFixed(0);
      const big = BigInt(text);
      return big < INT64_MIN || big > INT64_MAX
        ? fail(`${text} does not fit an Int (64 bits)`)
        : text;
    }
    case 'Numeric': {
      const n = exactNumber(value, fail);
      if (n === undefined) return undefined;
      const text = n.toFixed(as.scale);
      const digits = text
        .replace(/^-/, '')
        .replace('.', '')
        .replace(/^0+(?=\d)/, '');
      return digits.length > 38
        ? fail(
            `${n.toString()} is too large for a Numeric ${as.scale} (at most ${38 - as.scale} digits before the point)`,
          )
        : text;
    }
    case 'Optional':
      if (value === null) return null;
      if (value instanceof Optional) {
        return value.hasValue() ? ctx.part(value.value(), as.of) : null;
      }
      return ctx.same(value, as.of);
    case 'List':
      return Array.isArray(value) ? value.map((v: unknown) => ctx.part(v, as.of)) : undefined;
    case 'TextMap':
    case 'Record':
    case 'Variant': {
      const entries = entriesOf(value);
      if (entries === undefined) return undefined;
      const tag = as.kind === 'Variant' ? entries.find(([k]) => k === 'tag')?.[1] : undefined;
      const out: Record<string, JsonValue> = {};
      for (const [k, v] of entries) {
        const rendering =
          as.kind === 'TextMap'
            ? as.of
            : as.kind === 'Record'
              ? as.parts.get(k)
              : k === 'value' && typeof tag === 'string'
                ? as.parts.get(tag)
                : undefined;
        out[k] = ctx.part(v, rendering);
      }
      return out;
    }
  }
}

/** A timestamp for a message, also one JS writes with a six-digit year. */
function timeOf(t: Date): string {
  return Number.isNaN(t.getTime()) ? 'an invalid timestamp' : t.toISOString();
}

/** A CEL number (int, uint, double or decimal) as a decimal; undefined for anything else. */
function exactNumber(
  value: unknown,
  fail: (message: string) => never,
): CelDecimal['value'] | undefined {
  if (value instanceof CelDecimal) return value.value;
  if (typeof value === 'bigint') return CelDecimal.fromBigInt(value).value;
  if (typeof value === 'number') {
    return (
      CelDecimal.fromNumber(value)?.value ?? fail(`${value} is not a number a command can carry`)
    );
  }
  if (typeof value === 'object' && value !== null) {
    const unsigned = unsignedValue(value);
    if (unsigned !== undefined) return exactNumber(unsigned, fail);
  }
  return undefined;
}

/** The entries of a CEL map (or a plain object); undefined for anything else. */
function entriesOf(value: unknown): [string, unknown][] | undefined {
  if (value instanceof Map) {
    return [...(value as Map<unknown, unknown>)].map(([k, v]) => [String(k), v]);
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null ? Object.entries(value) : undefined;
}

/** CEL `uint` values are wrapper objects in the library; their number is `.value`. */
export function unsignedValue(value: object): bigint | number | undefined {
  if ((value as { constructor?: { name?: unknown } }).constructor?.name !== 'UnsignedInt') {
    return undefined;
  }
  const inner = (value as { value?: unknown }).value;
  return typeof inner === 'bigint' || typeof inner === 'number' ? inner : undefined;
}
