import { HttpProblem, type Route } from './ops-http.js';
import { sessionCookie, type OpsSessions } from './ops-sessions.js';

/**
 * The console's sign-in (docs/operations-api.md): `POST /login` trades the token for a session
 * cookie, `POST /logout` ends it, `GET /session` tells the page what it needs to know first.
 */
export function sessionRoutes(sessions: OpsSessions, readOnly: boolean): Route[] {
  return [
    {
      method: 'GET',
      pattern: /^\/session$/,
      auth: false,
      handle: (_params, _url, { credential }) => ({
        status: 200,
        body: {
          authRequired: sessions.authRequired,
          authenticated: credential !== 'none',
          readOnly,
        },
      }),
    },
    {
      method: 'POST',
      pattern: /^\/login$/,
      auth: false,
      body: true,
      readOnlyAllowed: true,
      handle: (_params, _url, { req, body }) => {
        if (!sessions.authRequired) return { status: 204, body: null };
        const id = sessions.login(
          tokenOf(req.headers['content-type'], body),
          req.socket.remoteAddress ?? '',
        );
        if (id === undefined) {
          throw new HttpProblem(401, 'UNAUTHORIZED', 'that is not the ops token');
        }
        return {
          status: 204,
          body: null,
          headers: { 'set-cookie': sessionCookie(id, overHttps(req.headers.origin)) },
        };
      },
    },
    {
      method: 'POST',
      pattern: /^\/logout$/,
      auth: false,
      readOnlyAllowed: true,
      handle: (_params, _url, { req }) => {
        sessions.logout(req);
        return { status: 204, body: null, headers: { 'set-cookie': sessionCookie(undefined) } };
      },
    },
  ];
}

/** The page was loaded over https: its Origin says so (the server itself speaks http only). */
function overHttps(origin: string | undefined): boolean {
  return origin?.startsWith('https://') === true;
}

/** The token of a login form (`token=…`) or JSON body (`{"token": "…"}`); '' when there is none. */
function tokenOf(contentType: string | undefined, body: string): string {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      throw new HttpProblem(400, 'BAD_REQUEST', 'the body is not JSON');
    }
    const token = (parsed as { token?: unknown } | null)?.token;
    if (typeof token !== 'string') {
      throw new HttpProblem(400, 'BAD_REQUEST', 'the body must be {"token": "…"}');
    }
    return token;
  }
  if (type === 'application/x-www-form-urlencoded') {
    return new URLSearchParams(body).get('token') ?? '';
  }
  throw new HttpProblem(
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    'send the token as application/x-www-form-urlencoded or application/json',
  );
}
