// Calls to the ops server. Same-origin fetches: the browser sends the session cookie (set by
// POST /login) and, on a POST or DELETE, the Origin header the server checks; no token is ever
// kept by the page itself.

/** A refused or failed call, with the server's error code when it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Called when the server answers 401: the session ended (or was never there). */
let onUnauthorised: () => void = () => undefined;

export function whenUnauthorised(handler: () => void): void {
  onUnauthorised = handler;
}

async function call(method: string, path: string, body?: unknown): Promise<Response> {
  const init: RequestInit = {
    method,
    credentials: 'same-origin',
    headers:
      body === undefined
        ? { accept: 'application/json' }
        : {
            accept: 'application/json',
            'content-type': 'application/json',
          },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  };
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'UNREACHABLE', 'the bot does not answer (is it running?)');
  }
  if (res.ok) return res;
  let code = `HTTP_${res.status}`;
  let message = res.statusText || `the bot answered ${res.status}`;
  try {
    const problem = (await res.json()) as { error?: { code?: unknown; message?: unknown } };
    if (typeof problem.error?.code === 'string') code = problem.error.code;
    if (typeof problem.error?.message === 'string') message = problem.error.message;
  } catch {
    // Not JSON: keep the status line.
  }
  if (res.status === 401 && path !== '/login') onUnauthorised();
  throw new ApiError(res.status, code, message);
}

/** GET a JSON document. */
export async function get<T>(path: string): Promise<T> {
  return (await (await call('GET', path)).json()) as T;
}

/** POST (or DELETE) and read the JSON answer, if any. */
export async function send<T = unknown>(
  method: 'POST' | 'DELETE',
  path: string,
  body?: unknown,
): Promise<T | undefined> {
  const res = await call(method, path, body);
  const text = await res.text();
  return text === '' ? undefined : (JSON.parse(text) as T);
}

/** A path with its query, leaving out empty parameters. */
export function withQuery(
  path: string,
  query: Readonly<Record<string, string | undefined>>,
): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') params.set(key, value);
  }
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
}

/** A path segment: an id as one segment, whatever it holds. */
export function segment(id: string): string {
  return encodeURIComponent(id);
}
