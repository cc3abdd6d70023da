/**
 * Daml `Date` and `Time` values as text, from CEL timestamps (JS Dates, millisecond precision),
 * in the form the JSON Ledger API reads. Canton 3.5 reads a Date with ISO_LOCAL_DATE, so it must
 * be `yyyy-mm-dd` (a timestamp there fails the command with HTTP 500); a Time is written as
 * Canton prints Daml Time inside values (ISO_DATE_TIME in UTC: seconds always, the fraction
 * without trailing zeros), which Canton also reads. Daml's dates run from 0001-01-01 to
 * 9999-12-31: a timestamp outside them has no text (null), where JS would write `+010000-…`.
 */

const MIN_MS = Date.parse('0001-01-01T00:00:00.000Z');
const MAX_MS = Date.parse('9999-12-31T23:59:59.999Z');

const DATE_TEXT = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Parses a Daml Date ("yyyy-mm-dd") to UTC midnight; null when it is not a real date. */
export function parseDamlDate(text: string): Date | null {
  const m = DATE_TEXT.exec(text);
  if (m === null) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (year < 1 || month < 1 || month > 12 || day < 1) return null;
  // Date.UTC reads years 0-99 as 1900-1999; setUTCFullYear takes the year as written.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  // A day past the month's end rolls over into the next month.
  return date.getUTCDate() === day ? date : null;
}

/** What a message says about a timestamp out of Daml's range. */
export const DAML_DATE_RANGE = "Daml's dates run from 0001-01-01 to 9999-12-31";

function inRange(t: Date): boolean {
  const ms = t.getTime();
  return ms >= MIN_MS && ms <= MAX_MS;
}

/** The UTC day of `t` as a Daml Date, `yyyy-mm-dd`; null outside Daml's range. */
export function damlDateText(t: Date): string | null {
  return inRange(t) ? t.toISOString().slice(0, 10) : null;
}

/** `t` as a Daml Time, e.g. `2025-01-31T09:00:00Z`, `…:00.5Z`; null outside Daml's range. */
export function damlTimeText(t: Date): string | null {
  if (!inRange(t)) return null;
  const iso = t.toISOString(); // yyyy-mm-ddThh:mm:ss.sssZ
  const fraction = iso.slice(20, 23).replace(/0+$/, '');
  return `${iso.slice(0, 19)}${fraction === '' ? '' : `.${fraction}`}Z`;
}
