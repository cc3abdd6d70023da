/**
 * Connection settings that add `extra` to libpq's `options` (settings made at connection start)
 * after those the URL gives: pg takes a URL's `options` over a config's, so a URL that has some
 * gets `extra` appended there. A URL the WHATWG parser refuses is passed as it is.
 */
export function withStartupOption(
  url: string,
  extra: string,
): { readonly connectionString: string; readonly options?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { connectionString: url, options: extra };
  }
  const given = parsed.searchParams.get('options');
  if (given === null || given.trim() === '') return { connectionString: url, options: extra };
  parsed.searchParams.set('options', `${given} ${extra}`);
  return { connectionString: parsed.toString() };
}
