import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Clock } from '../../core/clock.js';
import { GuessLimiter } from './guess-limiter.js';
import { HttpProblem, type Credential } from './ops-http.js';

/** The console's session cookie: a random id, never the token. */
export const SESSION_COOKIE = 'ledgerbot_session';
/** A session unused this long is gone. */
export const SESSION_IDLE_MS = 12 * 3600_000;
/** Live sessions kept; a login beyond drops the least recently used one. */
export const MAX_SESSIONS = 100;

export type OpsSessions = {
  /** A token is configured: every endpoint but the probes and the console's files needs it. */
  readonly authRequired: boolean;
  /**
   * How `req` proves itself: the bearer token, a live session cookie, or not at all. Throws
   * HttpProblem 429 TOO_MANY_GUESSES for a bearer token from an address that sent too many
   * wrong ones lately (see GuessLimiter).
   */
  credentialOf(req: IncomingMessage): Credential;
  /**
   * Checks `token` sent from `address`; right: a new session id for the cookie, wrong:
   * undefined. Throws HttpProblem 429 TOO_MANY_GUESSES as `credentialOf` does.
   */
  login(token: string, address?: string): string | undefined;
  /** Ends the session of the request's cookie, if any. */
  logout(req: IncomingMessage): void;
};

/**
 * The ops server's credentials: the bearer token (`http.token`) and the console's sessions, kept
 * in memory (a restart logs everyone out). Comparisons are of SHA-256 digests with
 * `timingSafeEqual`, so they take the same time whatever the guess.
 */
export function opsSessions(token: string | undefined, clock: Clock): OpsSessions {
  const tokenDigest = token === undefined ? undefined : digest(token);
  /** Digest of the session id → last use (epoch ms); Map order is least recently used first. */
  const sessions = new Map<string, number>();

  const guesses = new GuessLimiter(clock);

  /** Whether `candidate` is the token, counting a wrong one against `address`. */
  const tokenMatches = (candidate: string, address: string): boolean => {
    if (tokenDigest === undefined) return false;
    const wait = guesses.waitMs(address);
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw new HttpProblem(
        429,
        'TOO_MANY_GUESSES',
        `too many wrong ops tokens from this address: try again in ${seconds} s`,
        { 'retry-after': String(seconds) },
      );
    }
    if (timingSafeEqual(digest(candidate), tokenDigest)) return true;
    guesses.failed(address);
    return false;
  };

  const sessionKey = (req: IncomingMessage): string | undefined => {
    const id = cookieValue(req.headers.cookie, SESSION_COOKIE);
    return id === undefined ? undefined : digest(id).toString('base64');
  };

  const live = (key: string): boolean => {
    const last = sessions.get(key);
    if (last === undefined) return false;
    const now = clock.now();
    sessions.delete(key);
    if (now - last > SESSION_IDLE_MS) return false;
    sessions.set(key, now);
    return true;
  };

  return {
    authRequired: tokenDigest !== undefined,
    credentialOf: (req) => {
      if (tokenDigest === undefined) return 'open';
      const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
      if (m !== null && tokenMatches(m[1]!.trim(), addressOf(req))) return 'bearer';
      const key = sessionKey(req);
      return key !== undefined && live(key) ? 'cookie' : 'none';
    },
    login: (candidate, address = '') => {
      if (!tokenMatches(candidate, address)) return undefined;
      const now = clock.now();
      for (const [key, last] of sessions) {
        if (now - last > SESSION_IDLE_MS || sessions.size >= MAX_SESSIONS) sessions.delete(key);
        else break;
      }
      const id = randomBytes(32).toString('base64url');
      sessions.set(digest(id).toString('base64'), now);
      return id;
    },
    logout: (req) => {
      const key = sessionKey(req);
      if (key !== undefined) sessions.delete(key);
    },
  };
}

/**
 * The `Set-Cookie` value of a session (`id`), or of its removal (undefined); `Secure` when the
 * page was loaded over https (a proxy terminating TLS), so the browser never sends it in clear.
 */
export function sessionCookie(id: string | undefined, secure = false): string {
  const attributes = `HttpOnly; SameSite=Strict; Path=/${secure ? '; Secure' : ''}`;
  return id === undefined
    ? `${SESSION_COOKIE}=; ${attributes}; Max-Age=0`
    : `${SESSION_COOKIE}=${id}; ${attributes}`;
}

/**
 * Why a state-changing request must be refused as cross-site, or undefined: an `Origin` other
 * than this server's (see ownOrigin), or a session cookie with neither `Origin`
 * nor `Sec-Fetch-Site: same-origin` (a browser that says nothing of where the request comes
 * from). A bearer token without `Origin` is a program (the CLI, curl), not a page.
 */
export function crossOriginReason(
  req: IncomingMessage,
  credential: Credential,
  allowedHosts: ReadonlySet<string> = new Set(),
): string | undefined {
  const origin = req.headers.origin;
  if (origin !== undefined) {
    return ownOrigin(origin, req.headers.host, allowedHosts)
      ? undefined
      : `a request from ${origin} may not change anything here`;
  }
  if (credential === 'cookie' && req.headers['sec-fetch-site'] !== 'same-origin') {
    return 'a change made with the session cookie must come from the console page (no Origin header)';
  }
  return undefined;
}

/**
 * The page's own origin: `http://` or `https://` (a proxy that terminates TLS) with the Host the
 * request names, or with a host name of `http.allowedHosts` (a proxy that rewrites the Host).
 */
function ownOrigin(
  origin: string,
  host: string | undefined,
  allowed: ReadonlySet<string>,
): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // `null` (a sandboxed frame, a file), or garbage
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (url.origin !== origin) return false; // a path, credentials: not what browsers send
  return url.host === (host ?? '').toLowerCase() || allowed.has(url.hostname);
}

/**
 * Whether a Host header names this machine's loopback (`localhost`, `127.0.0.1`, `[::1]`, any
 * port). Without a token, a server bound to loopback answers only such requests: a page of
 * another site whose name was made to resolve to 127.0.0.1 (DNS rebinding) sends its own name.
 */
export function isLoopbackHost(host: string | undefined): boolean {
  const name = hostName(host);
  return name === 'localhost' || name === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(name);
}

/** The name of a Host header without its port, in lower case ('' without one). */
export function hostName(host: string | undefined): string {
  if (host === undefined) return '';
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
  return name.toLowerCase();
}

function addressOf(req: IncomingMessage): string {
  // Tests hand in bare header objects; a real request always has its socket.
  return (req.socket as IncomingMessage['socket'] | undefined)?.remoteAddress ?? '';
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
