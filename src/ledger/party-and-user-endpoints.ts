import type { CallOptions } from './http-transport.js';
import { badShape, segment, type JsonCalls } from './json-calls.js';
import {
  rightsBody,
  type IdentityProviderOption,
  type ListPartiesQuery,
  type ListUsersQuery,
} from './ledger-requests.js';
import type {
  AllocatePartyRequest,
  AllocatePartyResponse,
  CreateUserRequest,
  CreateUserResponse,
  GetPartiesResponse,
  GetUserResponse,
  GrantUserRightsResponse,
  ListKnownPartiesResponse,
  ListUserRightsResponse,
  ListUsersResponse,
  RevokeUserRightsResponse,
  Right,
} from './wire/wire-types.js';

/**
 * The party and user management endpoints (`/v2/parties`, `/v2/users`, `/v2/authenticated-user`):
 * what setting a bot up needs (its parties, its user and rights), not what it runs on. Methods of
 * LedgerClient, which extends this class; apart only to keep the client's file readable.
 */
export abstract class PartyAndUserEndpoints {
  protected readonly json: JsonCalls;

  protected constructor(json: JsonCalls) {
    this.json = json;
  }

  // ---- parties ----

  allocateParty(req: AllocatePartyRequest, options?: CallOptions): Promise<AllocatePartyResponse> {
    return this.json.object('POST', '/v2/parties', options, { body: req });
  }

  listParties(
    query: ListPartiesQuery = {},
    options?: CallOptions,
  ): Promise<ListKnownPartiesResponse> {
    return this.json.object('GET', '/v2/parties', options, {
      query: {
        'identity-provider-id': query.identityProviderId,
        'filter-party': query.filterParty,
        pageSize: query.pageSize,
        pageToken: query.pageToken,
      },
    });
  }

  /** Details of `party` and of `more`; unknown parties are left out of the answer. */
  async getParties(
    party: string,
    more: readonly string[] = [],
    options?: CallOptions & IdentityProviderOption,
  ): Promise<GetPartiesResponse> {
    return await this.json.object('GET', `/v2/parties/${segment(party)}`, options, {
      query: {
        parties: more.length === 0 ? undefined : more,
        'identity-provider-id': options?.identityProviderId,
      },
    });
  }

  async participantId(options?: CallOptions): Promise<string> {
    const res = await this.json.object<{ participantId?: unknown }>(
      'GET',
      '/v2/parties/participant-id',
      options,
    );
    if (typeof res.participantId !== 'string') {
      throw badShape('GET /v2/parties/participant-id', 'participantId is not a string');
    }
    return res.participantId;
  }

  // ---- users ----

  createUser(req: CreateUserRequest, options?: CallOptions): Promise<CreateUserResponse> {
    return this.json.object('POST', '/v2/users', options, { body: req });
  }

  async getUser(
    userId: string,
    options?: CallOptions & IdentityProviderOption,
  ): Promise<GetUserResponse> {
    return await this.json.object('GET', `/v2/users/${segment(userId)}`, options, {
      query: { 'identity-provider-id': options?.identityProviderId },
    });
  }

  async deleteUser(userId: string, options?: CallOptions): Promise<void> {
    await this.json.object('DELETE', `/v2/users/${segment(userId)}`, options);
  }

  listUsers(query: ListUsersQuery = {}, options?: CallOptions): Promise<ListUsersResponse> {
    return this.json.object('GET', '/v2/users', options, {
      query: { pageSize: query.pageSize, pageToken: query.pageToken },
    });
  }

  async grantRights(
    userId: string,
    rights: readonly Right[],
    options?: CallOptions & IdentityProviderOption,
  ): Promise<GrantUserRightsResponse> {
    return await this.json.object('POST', `/v2/users/${segment(userId)}/rights`, options, {
      body: rightsBody(userId, rights, options),
    });
  }

  async listRights(userId: string, options?: CallOptions): Promise<ListUserRightsResponse> {
    return await this.json.object('GET', `/v2/users/${segment(userId)}/rights`, options);
  }

  async revokeRights(
    userId: string,
    rights: readonly Right[],
    options?: CallOptions & IdentityProviderOption,
  ): Promise<RevokeUserRightsResponse> {
    return await this.json.object('PATCH', `/v2/users/${segment(userId)}/rights`, options, {
      body: rightsBody(userId, rights, options),
    });
  }

  /** The user the token belongs to. */
  authenticatedUser(options?: CallOptions & IdentityProviderOption): Promise<GetUserResponse> {
    return this.json.object('GET', '/v2/authenticated-user', options, {
      query: { 'identity-provider-id': options?.identityProviderId },
    });
  }
}
