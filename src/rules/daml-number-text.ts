import { Decimal } from 'decimal.js';

/**
 * Daml Int64 and Numeric values travel as JSON strings: Canton 3.5 reads an Int64 only from a
 * string (a JSON number is an HTTP 500) and every version reads a Numeric from one. In Daml-LF
 * JSON a number can only be one of those two, so every number in a command value becomes its
 * exact decimal text.
 */

const DECIMAL_INT = /^[-+]?[0-9]+$/;
const RADIX_INT = /^0x[0-9a-fA-F]+$|^0o[0-7]+$/;
const DECIMAL_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

/**
 * The exact decimal text of a finite JS number, without exponent: `1e21` is
 * "1000000000000000000000", `0.1` is "0.1" (its shortest rendering, not the binary expansion),
 * `-0` is "0". Null for NaN and the infinities, which no Daml value can hold.
 */
export function numberText(n: number): string | null {
  if (!Number.isFinite(n)) return null;
  if (Number.isSafeInteger(n)) return String(n === 0 ? 0 : n);
  return new Decimal(String(n)).toFixed();
}

/**
 * The exact decimal text of a YAML number as written in the file (YAML 1.2 core schema: decimal,
 * `0x` and `0o` integers, decimals with an optional exponent). Read from the source text, so
 * `12345678901234567890` keeps its digits, which the parsed double has lost. Null when the text
 * is not such a number (`.inf`, `.nan`).
 */
export function yamlNumberText(source: string): string | null {
  const text = source.trim();
  if (DECIMAL_INT.test(text) || RADIX_INT.test(text)) return BigInt(text).toString();
  if (DECIMAL_FLOAT.test(text)) return new Decimal(text).toFixed();
  return null;
}
