/**
 * Daml `Time` values as text: parsed from what a command may send, printed as Canton prints
 * them (in values, and at the top level of events).
 */

const TIMESTAMP_TEXT =
  /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** A time's whole second as `yyyy-mm-ddThh:mm:ss` (UTC), and the microseconds past it. */
function splitSeconds(epochMicros: bigint): { base: string; micros: number } {
  const ms = Number(epochMicros / 1000n);
  const micros = Number(((epochMicros % 1_000_000n) + 1_000_000n) % 1_000_000n);
  return { base: new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19), micros };
}

/** Renders a time as java.time.Instant.toString does: fraction in groups of 3 digits, or none. */
export function formatTimestamp(epochMicros: bigint): string {
  const { base, micros } = splitSeconds(epochMicros);
  if (micros === 0) return `${base}Z`;
  const fraction = String(micros).padStart(6, '0');
  return `${base}.${fraction.endsWith('000') ? fraction.slice(0, 3) : fraction}Z`;
}

/**
 * Renders a Daml `Time` value as Canton's JSON codec does (`DateTimeFormatter.ISO_DATE_TIME`):
 * seconds always, the fraction without trailing zeros (`.5`, `.12`), none when zero. Only
 * top-level times (createdAt, effectiveAt, recordTime) use Instant.toString (formatTimestamp).
 */
export function formatDamlTime(epochMicros: bigint): string {
  const { base, micros } = splitSeconds(epochMicros);
  if (micros === 0) return `${base}Z`;
  return `${base}.${String(micros).padStart(6, '0').replace(/0+$/, '')}Z`;
}

/** Microseconds since the epoch of a Daml Timestamp text; null when it is not one. */
export function parseTimestamp(text: string): bigint | null {
  const m = TIMESTAMP_TEXT.exec(text);
  if (m === null) return null;
  const seconds = Date.parse(`${m[1]}T${m[2]}${m[4]}`);
  if (Number.isNaN(seconds)) return null;
  const fraction = (m[3] ?? '').padEnd(9, '0');
  // Daml times have microsecond precision; finer digits are truncated.
  return BigInt(seconds) * 1000n + BigInt(fraction.slice(0, 6));
}
