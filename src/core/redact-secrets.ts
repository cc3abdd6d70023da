/** What a redacted value is replaced with. */
export const REDACTED = '[redacted]';

/** Field names whose values are secrets, lower-cased: matched at any depth, in any case. */
const SECRET_KEYS = new Set([
  'token',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'clientsecret',
  'secret',
  'authorization',
  'proxy-authorization',
  'password',
  'cookie',
  'set-cookie',
]);

/** Deeper than this, values are not inspected (log fields are shallow; cycles end here too). */
const MAX_DEPTH = 6;

/**
 * A log object with every secret field's value replaced by REDACTED, at any depth up to
 * MAX_DEPTH and whatever the case of the name. Returns `obj` itself when it holds no secret (the
 * common case: one pass over the keys, no copy); otherwise a copy of just the path to each
 * secret, so the caller's object is never changed. Used as pino's log formatter: matching names
 * at every depth is both stricter than a list of paths and cheaper than pino's path redaction,
 * which the bot paid on every intent state change line.
 */
export function redactSecrets<T extends object>(obj: T): T {
  return redactValue(obj, 0) as T;
}

function redactValue(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = value[i] as unknown;
      const r = redactValue(v, depth + 1);
      if (r !== v) (copy ??= [...(value as unknown[])])[i] = r;
    }
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const v = record[key];
    const r = SECRET_KEYS.has(key.toLowerCase())
      ? v === undefined || v === null
        ? v
        : REDACTED
      : redactValue(v, depth + 1);
    if (r !== v) (copy ??= plainCopy(value))[key] = r;
  }
  return copy ?? value;
}

/** An Error keeps what pino's error serializer would have written: its type, message and stack. */
function plainCopy(value: object): Record<string, unknown> {
  if (value instanceof Error) {
    return { ...value, type: value.name, message: value.message, stack: value.stack };
  }
  return { ...value };
}
