import { showType, type DamlType } from '../daml-lf/daml-type.js';
import type { ResolvedType } from '../daml-lf/package-catalogue.js';
import { parseDamlDate } from './cel/daml-time-text.js';

/**
 * Daml scalars written as text in a command's arguments, checked for what the participant
 * reads: an Int64 is whole and fits 64 bits; a Numeric n is a plain decimal with at most n
 * digits after the point and 38 in all; a Date is `yyyy-mm-dd`, a real day; a Time is ISO 8601
 * with seconds and a zone (`2025-01-31T09:00:00Z`), at most microsecond precision.
 */

export type LiteralProblem = { readonly message: string; readonly hint: string };

/** The range of a Daml Int (Int64). */
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
const DECIMAL = /^([+-]?)(\d+)(?:\.(\d+))?$/;
const TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/;

/** The problem of `text` as a value of `resolved`; null when it is fine or not a scalar. */
export function literalProblem(
  resolved: ResolvedType,
  type: DamlType,
  text: string,
): LiteralProblem | null {
  const shown = `"${text.length > 40 ? `${text.slice(0, 40)}…` : text}"`;
  switch (resolved.kind) {
    case 'Int64': {
      const m = DECIMAL.exec(text);
      if (m === null || m[3] !== undefined) {
        return {
          message: `${shown} is not an Int (a whole number)`,
          hint: 'write a whole number, e.g. 42 or "-7"',
        };
      }
      const n = BigInt(text);
      return n < INT64_MIN || n > INT64_MAX
        ? { message: `${shown} does not fit an Int (64 bits)`, hint: `at most ${INT64_MAX}` }
        : null;
    }
    case 'Numeric': {
      const m = DECIMAL.exec(text);
      if (m === null) {
        return {
          message: `${shown} is not a ${showType(type)}`,
          hint: 'write a decimal number without exponent, e.g. 12.5 or "-0.25"',
        };
      }
      if (typeof resolved.scale !== 'number') return null;
      const fraction = (m[3] ?? '').replace(/0+$/, '');
      const whole = m[2]!.replace(/^0+(?=\d)/, '');
      if (fraction.length > resolved.scale) {
        return {
          message: `${shown} has ${fraction.length} digits after the point; a ${showType(type)} has at most ${resolved.scale}`,
          hint: `round it to ${resolved.scale} decimal places`,
        };
      }
      if (whole !== '0' && whole.length > 38 - resolved.scale) {
        return {
          message: `${shown} is too large for a ${showType(type)} (at most ${38 - resolved.scale} digits before the point)`,
          hint: 'check the magnitude',
        };
      }
      return null;
    }
    case 'Date':
      return parseDamlDate(text) === null
        ? {
            message: `${shown} is not a Date`,
            hint: /^\d{4}-\d{2}-\d{2}T/.test(text)
              ? 'a Date is the day alone: yyyy-mm-dd, e.g. 2025-01-31'
              : 'write yyyy-mm-dd, e.g. 2025-01-31',
          }
        : null;
    case 'Timestamp': {
      const m = TIME.exec(text);
      if (
        m === null ||
        parseDamlDate(m[1]!) === null ||
        Number(m[2]) > 23 ||
        Number(m[3]) > 59 ||
        Number(m[4]) > 59
      ) {
        return {
          message: `${shown} is not a Time`,
          hint: 'write an ISO 8601 time with seconds and a zone, e.g. 2025-01-31T09:00:00Z',
        };
      }
      return /[1-9]/.test((m[5] ?? '').slice(6))
        ? {
            message: `${shown} is more precise than a Time, which counts microseconds`,
            hint: 'give at most 6 digits after the seconds',
          }
        : null;
    }
    default:
      return null;
  }
}
