/**
 * The URL with libpq's meaning of `sslmode`: node-postgres reads `require`, `prefer` and
 * `verify-ca` as `verify-full` (it verifies the server's certificate and name), unless the URL
 * asks for libpq's semantics (`uselibpqcompat=true`). The docs promise libpq's spelling, and an
 * operator copies a libpq URL: `?sslmode=require` to a server with a self-signed certificate
 * must connect (encrypted, unverified), as psql does. A URL that says either way is left as it
 * is; one the WHATWG parser refuses, too (node-postgres then reports it).
 */
export function libpqUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (!parsed.searchParams.has('sslmode') || parsed.searchParams.has('uselibpqcompat')) return url;
  parsed.searchParams.set('uselibpqcompat', 'true');
  return parsed.toString();
}
