import { decodeJwt, jwtVerify } from 'jose';
import type { Clock } from '../../core/clock.js';
import type { Right } from '../../ledger/wire/wire-types.js';
import { SandboxApiError } from './sandbox-api-error.js';

export type SandboxAuthMode = 'none' | { readonly hs256: string };

/**
 * Who is calling. `any` is the wildcard of an unsecured participant (`--auth none`); `userId` is
 * then the token's `sub` when a token was sent anyway, so commands may omit their userId.
 */
export type Principal =
  | { readonly kind: 'any'; readonly userId: string | undefined }
  | { readonly kind: 'user'; readonly userId: string };

type Claims = {
  readonly admin: boolean;
  readonly readAny: boolean;
  readonly actAs: ReadonlySet<string>;
  readonly readAs: ReadonlySet<string>;
};

export type UserDirectory = {
  /** The user's rights, or undefined when the user does not exist or is deactivated. */
  readonly rightsOf: (userId: string) => readonly Right[] | undefined;
};

export const AUDIENCE_PREFIX = 'https://daml.com/jwt/aud/participant/';
const TOKEN_CACHE_LIMIT = 10_000;

/** The redacted 401 Canton answers for a missing, malformed, expired or foreign token. */
export function unauthenticated(reason: string): SandboxApiError {
  return new SandboxApiError('UNAUTHENTICATED', reason);
}

/** The redacted 403 Canton answers when a right is missing. */
export function permissionDenied(reason: string): SandboxApiError {
  return new SandboxApiError('PERMISSION_DENIED', reason);
}

/**
 * Token verification and user-right checks, as a Canton participant with an `unsafe-jwt-hmac-256`
 * auth service and audience-based user tokens does them (NOTES.md §1). Rights are read live from
 * the user directory (cached until `invalidate()`), so grants and revocations apply at once.
 */
export class SandboxAuth {
  readonly #mode: SandboxAuthMode;
  readonly #participantId: string;
  readonly #users: UserDirectory;
  readonly #clock: Clock;
  readonly #key: Uint8Array | undefined;
  readonly #tokens = new Map<string, { userId: string; expMs: number }>();
  readonly #claims = new Map<string, Claims>();

  constructor(options: {
    mode: SandboxAuthMode;
    participantId: string;
    users: UserDirectory;
    clock: Clock;
  }) {
    this.#mode = options.mode;
    this.#participantId = options.participantId;
    this.#users = options.users;
    this.#clock = options.clock;
    this.#key = options.mode === 'none' ? undefined : new TextEncoder().encode(options.mode.hs256);
  }

  get enabled(): boolean {
    return this.#mode !== 'none';
  }

  /** Call after any change to users or rights. */
  invalidate(): void {
    this.#claims.clear();
  }

  /**
   * Authenticates a request from its Authorization header value (HTTP) or websocket token.
   * Throws the 401 / 403 errors Canton answers with.
   */
  async authenticate(token: string | undefined): Promise<Principal> {
    if (this.#key === undefined) {
      return { kind: 'any', userId: token === undefined ? undefined : subjectOf(token) };
    }
    if (token === undefined || token === '') {
      throw unauthenticated('The command is missing a (valid) JWT token');
    }
    let entry = this.#tokens.get(token);
    if (entry === undefined) {
      entry = await this.#verify(token, this.#key);
      if (this.#tokens.size >= TOKEN_CACHE_LIMIT) this.#tokens.clear();
      this.#tokens.set(token, entry);
    }
    if (entry.expMs <= this.#clock.now()) throw unauthenticated('Claims were valid until expiry');
    if (this.#users.rightsOf(entry.userId) === undefined) {
      throw new SandboxApiError('PERMISSION_DENIED', 'Could not resolve the user of the token', {
        redactedContext: { ledger_api_error: 'invalid token' },
      });
    }
    return { kind: 'user', userId: entry.userId };
  }

  async #verify(token: string, key: Uint8Array): Promise<{ userId: string; expMs: number }> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, key, {
        algorithms: ['HS256'],
        currentDate: new Date(this.#clock.now()),
      }));
    } catch (err) {
      throw unauthenticated(
        `The token could not be verified: ${err instanceof Error ? err.name : 'error'}`,
      );
    }
    const aud = payload.aud;
    const auds = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? (aud as unknown[]) : [];
    const participantAuds = auds.filter(
      (a): a is string => typeof a === 'string' && a.startsWith(AUDIENCE_PREFIX),
    );
    if (participantAuds.length > 0) {
      if (participantAuds.length !== 1) throw unauthenticated('More than one participant audience');
      const target = participantAuds[0]!.slice(AUDIENCE_PREFIX.length);
      if (target !== this.#participantId) {
        throw unauthenticated('The token is restricted to another participant');
      }
    } else {
      const scope = payload.scope ?? payload.scp;
      const scopes =
        typeof scope === 'string' ? scope.split(' ') : Array.isArray(scope) ? scope : [];
      if (!scopes.includes('daml_ledger_api')) {
        throw unauthenticated('Access token with unknown scope');
      }
      if (auds.length > 1 || (auds.length === 1 && auds[0] !== this.#participantId)) {
        throw unauthenticated('The token is restricted to another participant');
      }
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') {
      throw unauthenticated('The token has no user (sub)');
    }
    const expMs = typeof payload.exp === 'number' ? payload.exp * 1000 : Number.POSITIVE_INFINITY;
    return { userId: payload.sub, expMs };
  }

  #claimsOf(userId: string): Claims {
    let c = this.#claims.get(userId);
    if (c === undefined) {
      const rights = this.#users.rightsOf(userId) ?? [];
      const actAs = new Set<string>();
      const readAs = new Set<string>();
      let admin = false;
      let readAny = false;
      for (const r of rights) {
        const k = r.kind as Record<string, { value?: { party?: string } } | undefined>;
        if (k.CanActAs?.value?.party !== undefined) {
          actAs.add(k.CanActAs.value.party);
          readAs.add(k.CanActAs.value.party);
        }
        if (k.CanReadAs?.value?.party !== undefined) readAs.add(k.CanReadAs.value.party);
        if (k.ParticipantAdmin !== undefined) admin = true;
        if (k.CanReadAsAnyParty !== undefined) readAny = true;
      }
      c = { admin, readAny, actAs, readAs };
      this.#claims.set(userId, c);
    }
    return c;
  }

  requireActAs(p: Principal, parties: readonly string[]): void {
    if (p.kind === 'any') return;
    const c = this.#claimsOf(p.userId);
    for (const party of parties) {
      if (!c.actAs.has(party)) throw permissionDenied(`Claims do not authorize to act as party`);
    }
  }

  requireReadAs(p: Principal, parties: readonly string[]): void {
    if (p.kind === 'any') return;
    const c = this.#claimsOf(p.userId);
    for (const party of parties) {
      if (!c.readAs.has(party) && !c.readAny) {
        throw permissionDenied('Claims do not authorize to read data for party');
      }
    }
  }

  requireReadAsAnyParty(p: Principal): void {
    if (p.kind === 'any') return;
    if (!this.#claimsOf(p.userId).readAny) {
      throw permissionDenied('Claims do not authorize to read data for all parties');
    }
  }

  requireAdmin(p: Principal): void {
    if (p.kind === 'any') return;
    if (!this.#claimsOf(p.userId).admin) throw permissionDenied('Claims do not authorize admin');
  }

  /** A user may act under its own user id only, unless it is an admin. */
  requireUser(p: Principal, userId: string): void {
    if (p.kind === 'any' || p.userId === userId) return;
    if (!this.#claimsOf(p.userId).admin) {
      throw permissionDenied('Claims do not authorize to use this user id');
    }
  }
}

function subjectOf(token: string): string | undefined {
  try {
    const sub = decodeJwt(token).sub;
    return typeof sub === 'string' && sub !== '' ? sub : undefined;
  } catch {
    return undefined;
  }
}

/** The bearer token of an Authorization header; '' for `Bearer ` with nothing after it. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const m = /^Bearer (.*)$/i.exec(header.trim() === 'Bearer' ? 'Bearer ' : header);
  return m === null ? undefined : (m[1] ?? '').trim();
}

/** The websocket token: split on "," without trimming, first `jwt.token.` entry (NOTES.md §1.2). */
export function websocketToken(protocolHeader: string | undefined): string | undefined {
  if (protocolHeader === undefined) return undefined;
  for (const entry of protocolHeader.split(',')) {
    if (entry.startsWith('jwt.token.')) return entry.slice('jwt.token.'.length);
  }
  return undefined;
}
