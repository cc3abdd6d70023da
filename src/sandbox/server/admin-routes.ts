import type { Right, User } from '../../ledger/wire/wire-types.js';
import type { Result } from '../engine/engine-types.js';
import { asObject, BodyDecodeError, invalidArgument, missingField } from './request-parsing.js';
import type { Handler, RouteContext, RouteResult } from './route-table.js';
import type { SandboxContext } from './sandbox-context.js';
import { fromEngineError, SandboxApiError } from './sandbox-api-error.js';

function unwrap<T>(r: Result<T>): T {
  if (!r.ok) throw fromEngineError(r.error);
  return r.value;
}

function json(body: unknown): RouteResult {
  return { status: 200, json: JSON.stringify(body) };
}

function rightsOf(v: unknown): Right[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new BodyDecodeError(`expected a list at 'rights'`);
  return v as Right[];
}

/**
 * Granting or revoking rights (admin only): the rights that changed, under `answer`; the cached
 * rights of every token are dropped, as the user's may have changed.
 */
function changeRights(
  s: SandboxContext,
  answer: 'newlyGrantedRights' | 'newlyRevokedRights',
  change: (userId: string, rights: readonly Right[]) => Result<readonly Right[]>,
): Handler {
  return (ctx) => {
    s.auth.requireAdmin(ctx.principal);
    const o = asObject(ctx.body);
    const id = ctx.params['user-id'] ?? '';
    const changed = unwrap(change(id, rightsOf(o.rights)));
    s.auth.invalidate();
    return json({ [answer]: changed });
  };
}

function page<T>(
  items: readonly T[],
  ctx: RouteContext,
  max: number,
): { items: T[]; next: string } {
  const sizeText = ctx.query.get('pageSize');
  const size =
    sizeText === null || sizeText === '' || Number(sizeText) <= 0
      ? max
      : Math.min(max, Math.floor(Number(sizeText)));
  if (!Number.isFinite(size)) throw new BodyDecodeError('query parameter pageSize');
  const tokenText = ctx.query.get('pageToken');
  const start = tokenText === null || tokenText === '' ? 0 : Number(tokenText);
  if (!Number.isInteger(start) || start < 0) throw invalidArgument('Invalid page token');
  const slice = items.slice(start, start + size);
  return { items: slice, next: start + size < items.length ? String(start + size) : '' };
}

function userNotFound(id: string): SandboxApiError {
  return new SandboxApiError('USER_NOT_FOUND', `getting user failed for unknown user "${id}"`, {
    resources: [['USER', id]],
  });
}

const MAX_PAGE = 1000;

export function adminRoutes(s: SandboxContext): Record<string, Handler> {
  const selfOrAdmin = (ctx: RouteContext, userId: string): void => {
    if (ctx.principal.kind === 'user' && ctx.principal.userId === userId) return;
    s.auth.requireAdmin(ctx.principal);
  };
  const userBody = (userId: string): string => {
    const user = s.engine.user(userId);
    if (user === undefined) throw userNotFound(userId);
    return JSON.stringify({ user });
  };
  return {
    'GET /v2/parties/participant-id': () => json({ participantId: s.participantId }),
    'POST /v2/parties': (ctx) => {
      s.auth.requireAdmin(ctx.principal);
      const o = asObject(ctx.body);
      const hintRaw = o.partyIdHint;
      if (hintRaw !== undefined && hintRaw !== null && typeof hintRaw !== 'string') {
        throw new BodyDecodeError(`expected a string at 'partyIdHint'`);
      }
      const hint =
        typeof hintRaw === 'string' && hintRaw !== ''
          ? hintRaw
          : `party-${s.random.uuid().slice(0, 8)}`;
      const userId = typeof o.userId === 'string' && o.userId !== '' ? o.userId : undefined;
      const details = unwrap(s.engine.allocateParty(hint, userId === undefined ? {} : { userId }));
      if (userId !== undefined) s.auth.invalidate();
      return json({ partyDetails: details });
    },
    'GET /v2/parties': (ctx) => {
      s.auth.requireAdmin(ctx.principal);
      const filter = ctx.query.get('filter-party') ?? '';
      const all = s.engine.parties().filter((p) => filter === '' || p.party.includes(filter));
      const { items, next } = page(all, ctx, MAX_PAGE);
      return json({ partyDetails: items, nextPageToken: next });
    },
    'GET /v2/parties/{party}': (ctx) => {
      s.auth.requireAdmin(ctx.principal);
      const wanted = [ctx.params.party ?? '', ...ctx.query.getAll('parties')];
      const found = [...new Set(wanted)]
        .map((p) => s.engine.party(p))
        .filter((p) => p !== undefined);
      return json({ partyDetails: found });
    },
    'GET /v2/users': (ctx) => {
      s.auth.requireAdmin(ctx.principal);
      const { items, next } = page(s.engine.users(), ctx, MAX_PAGE);
      return json({ users: items, nextPageToken: next });
    },
    'POST /v2/users': (ctx) => {
      s.auth.requireAdmin(ctx.principal);
      const o = asObject(ctx.body);
      if (o.user === undefined || o.user === null) throw missingField('user');
      const user = asObject(o.user) as User;
      const created = unwrap(s.engine.createUser(user, rightsOf(o.rights)));
      s.auth.invalidate();
      return json({ user: created });
    },
    'GET /v2/users/{user-id}': (ctx) => {
      const id = ctx.params['user-id'] ?? '';
      selfOrAdmin(ctx, id);
      return { status: 200, json: userBody(id) };
    },
    'DELETE /v2/users/{user-id}': (ctx) => {
      s.auth.requireAdmin(ctx.principal);
      unwrap(s.engine.deleteUser(ctx.params['user-id'] ?? ''));
      s.auth.invalidate();
      return { status: 200, json: '{}' };
    },
    'GET /v2/authenticated-user': (ctx) => {
      const id = ctx.principal.userId;
      if (id === undefined) {
        throw invalidArgument('The request is not authenticated with a user token');
      }
      return { status: 200, json: userBody(id) };
    },
    'GET /v2/users/{user-id}/rights': (ctx) => {
      const id = ctx.params['user-id'] ?? '';
      selfOrAdmin(ctx, id);
      return json({ rights: unwrap(s.engine.userRights(id)) });
    },
    'POST /v2/users/{user-id}/rights': changeRights(s, 'newlyGrantedRights', (id, rights) =>
      s.engine.grantUserRights(id, rights),
    ),
    'PATCH /v2/users/{user-id}/rights': changeRights(s, 'newlyRevokedRights', (id, rights) =>
      s.engine.revokeUserRights(id, rights),
    ),
    'GET /v2/version': () => {
      const seconds = Math.max(1, Math.ceil((2 * s.limits.checkpointIntervalMs) / 1000));
      return json({
        version: s.version,
        features: {
          experimental: {
            staticTime: { supported: false },
            commandInspectionService: { supported: false },
          },
          userManagement: { supported: true, maxRightsPerUser: 1000, maxUsersPageSize: MAX_PAGE },
          partyManagement: { maxPartiesPageSize: MAX_PAGE },
          offsetCheckpoint: { maxOffsetCheckpointEmissionDelay: { seconds, nanos: 0 } },
          packageFeature: { maxVettedPackagesPageSize: 100 },
        },
      });
    },
    'GET /livez': () => ({ status: 200, text: '' }),
    'GET /readyz': () => ({ status: 200, text: '[+] ledger ok (SERVING)\nreadyz check passed\n' }),
  };
}
