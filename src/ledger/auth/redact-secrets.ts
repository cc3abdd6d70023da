export const REDACTED = '[redacted]';

/**
 * Replaces every occurrence of each secret in `text`. Used on text that came from outside (an
 * error description from a token endpoint, an exception message) before it goes into our errors.
 */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) {
    if (s !== undefined && s.length > 0) out = out.split(s).join(REDACTED);
  }
  return out;
}

/** A URL fit for messages and logs: no user info, no query values, no fragment. */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return '<invalid URL>';
  }
  if (u.username !== '') u.username = 'redacted';
  if (u.password !== '') u.password = 'redacted';
  for (const key of [...u.searchParams.keys()]) u.searchParams.set(key, 'redacted');
  u.hash = '';
  return u.toString();
}
