/** `text` read as the http(s) address of a server, or what keeps it from being one. */
export type ParsedHttpUrl =
  | {
      readonly ok: true;
      readonly url: URL;
      /** A user or password in the URL: it would end up in logs (and in committed files). */
      readonly hasCredentials: boolean;
    }
  | { readonly ok: false; readonly problem: 'not-a-url' }
  | { readonly ok: false; readonly problem: 'not-http'; readonly protocol: string };

/**
 * Parses an http(s) URL (the participant's, an OAuth2 token endpoint's). Never throws: the
 * parser's error repeats the URL, which may hold credentials, so each caller words the problem.
 */
export function parseHttpUrl(text: string): ParsedHttpUrl {
  if (!URL.canParse(text)) return { ok: false, problem: 'not-a-url' };
  const url = new URL(text);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, problem: 'not-http', protocol: url.protocol };
  }
  return { ok: true, url, hasCredentials: url.username !== '' || url.password !== '' };
}
