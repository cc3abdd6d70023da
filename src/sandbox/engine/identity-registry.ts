import type { PartyDetails, Right, User } from '../../ledger/wire/wire-types.js';
import { engineError, type EngineError } from './engine-error.js';
import type { Result } from './engine-types.js';

const PARTY_HINT = /^[A-Za-z0-9:_\- ]{1,185}$/;
const USER_ID = /^[A-Za-z0-9@^$.!`\-#+'~_|:()]{1,128}$/;

const rightKey = (r: Right): string => JSON.stringify(r.kind);

const ok = <T>(value: T): Result<T> => ({ ok: true, value });
const err = <T>(error: EngineError): Result<T> => ({ ok: false, error });

/**
 * The participant's parties and Ledger API users with their rights, answering with the errors
 * Canton's party and user management services give. See `PartyAdmin` for each method.
 */
export class IdentityRegistry {
  readonly #namespace: string;
  readonly #parties = new Map<string, PartyDetails>();
  readonly #users = new Map<string, { user: User; rights: Right[] }>();

  /** `namespace`: the participant's, which every allocated party gets. */
  constructor(namespace: string) {
    this.#namespace = namespace;
  }

  allocateParty(hint: string, options: { readonly userId?: string } = {}): Result<PartyDetails> {
    const userId = options.userId;
    if (!PARTY_HINT.test(hint) || hint.includes('::')) {
      return err(
        engineError(
          'INVALID_ARGUMENT',
          8,
          `The submitted request has invalid arguments: Party id hint "${hint}" is not a valid party id hint`,
        ),
      );
    }
    if (userId !== undefined && userId !== '' && !this.#users.has(userId)) {
      return err(userNotFound(userId));
    }
    const party = `${hint}::${this.#namespace}`;
    if (this.#parties.has(party)) {
      return err(
        engineError(
          'INVALID_ARGUMENT',
          8,
          `The submitted request has invalid arguments: Party already exists: party ${party} is already allocated on this node`,
        ),
      );
    }
    const details: PartyDetails = {
      party,
      isLocal: true,
      localMetadata: { resourceVersion: '0', annotations: {} },
      identityProviderId: '',
    };
    this.#parties.set(party, details);
    if (userId !== undefined && userId !== '') {
      this.grantUserRights(userId, [{ kind: { CanActAs: { value: { party } } } }]);
    }
    return ok(details);
  }

  parties(): readonly PartyDetails[] {
    return [...this.#parties.values()].sort((a, b) => (a.party < b.party ? -1 : 1));
  }

  party(id: string): PartyDetails | undefined {
    return this.#parties.get(id);
  }

  isKnownParty(party: string): boolean {
    return this.#parties.has(party);
  }

  createUser(user: User, rights: readonly Right[]): Result<User> {
    if (!USER_ID.test(user.id)) {
      return err(
        engineError(
          'INVALID_ARGUMENT',
          8,
          `The submitted request has invalid arguments: invalid user id "${user.id}"`,
        ),
      );
    }
    if (this.#users.has(user.id)) {
      return err(
        engineError(
          'USER_ALREADY_EXISTS',
          10,
          `creating user failed, as user "${user.id}" already exists`,
          { resources: [['USER', user.id]] },
        ),
      );
    }
    const stored: User = {
      id: user.id,
      primaryParty: user.primaryParty ?? '',
      isDeactivated: user.isDeactivated ?? false,
      metadata: { resourceVersion: '0', annotations: user.metadata?.annotations ?? {} },
      identityProviderId: user.identityProviderId ?? '',
    };
    this.#users.set(user.id, { user: stored, rights: dedupeRights(rights) });
    return ok(stored);
  }

  user(id: string): User | undefined {
    return this.#users.get(id)?.user;
  }

  users(): readonly User[] {
    return [...this.#users.values()].map((u) => u.user).sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  deleteUser(id: string): Result<null> {
    if (!this.#users.delete(id)) return err(userNotFound(id));
    return ok(null);
  }

  userRights(id: string): Result<readonly Right[]> {
    const u = this.#users.get(id);
    return u === undefined ? err(userNotFound(id)) : ok([...u.rights]);
  }

  grantUserRights(id: string, rights: readonly Right[]): Result<readonly Right[]> {
    const u = this.#users.get(id);
    if (u === undefined) return err(userNotFound(id));
    const have = new Set(u.rights.map(rightKey));
    const added = dedupeRights(rights).filter((r) => !have.has(rightKey(r)));
    u.rights.push(...added);
    return ok(added);
  }

  revokeUserRights(id: string, rights: readonly Right[]): Result<readonly Right[]> {
    const u = this.#users.get(id);
    if (u === undefined) return err(userNotFound(id));
    const drop = new Set(rights.map(rightKey));
    const removed = u.rights.filter((r) => drop.has(rightKey(r)));
    u.rights = u.rights.filter((r) => !drop.has(rightKey(r)));
    return ok(removed);
  }
}

function userNotFound(id: string): EngineError {
  return engineError('USER_NOT_FOUND', 11, `getting user failed for unknown user "${id}"`, {
    resources: [['USER', id]],
  });
}

function dedupeRights(rights: readonly Right[]): Right[] {
  const seen = new Set<string>();
  return rights.filter((r) => {
    const k = rightKey(r);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
