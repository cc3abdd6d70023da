/**
 * A PostgreSQL URL fit for a message: its password replaced by `***`. A text that is not a URL
 * (a libpq key=value string, a typo) is not shown at all: it may hold the password anywhere.
 */
export function maskPgUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(a PostgreSQL connection string that is not a URL)';
  }
  if (parsed.password !== '') parsed.password = '***';
  for (const key of [...parsed.searchParams.keys()]) {
    if (/pass|secret|key|token/i.test(key)) parsed.searchParams.set(key, '***');
  }
  return parsed.toString();
}

/** `text` with every occurrence of the URL's password (raw or percent-decoded) replaced by `***`. */
export function withoutPassword(text: string, url: string): string {
  let password = '';
  try {
    password = new URL(url).password;
  } catch {
    return text.replaceAll(url, maskPgUrl(url));
  }
  if (password === '') return text;
  let out = text.replaceAll(password, '***');
  try {
    const decoded = decodeURIComponent(password);
    if (decoded !== '') out = out.replaceAll(decoded, '***');
  } catch {
    // A password that is not valid percent-encoding: its raw form is replaced above.
  }
  return out;
}
