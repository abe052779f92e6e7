/**
 * The CAS user-administration API (`cas-api`, decisions.md §Central authentication service):
 * what `GET /api/users` and `GET /api/users/{id}` answer. collect-api reads it when it
 * on-boards CAS users, so the shape lives here.
 */
export interface CasUser {
  /** The CAS subject (`sub` of this user's tokens), a UUID. */
  id: string;
  username: string;
  email: string;
  given_name: string;
  family_name: string;
  /** given_name and family_name joined by a space; empty when both are. */
  name: string;
  enabled: boolean;
  /** ISO 8601, UTC. */
  created_at: string;
}

/** DRF-style page: `next` / `previous` are absolute URLs or null. */
export interface CasUserPage {
  count: number;
  next: string | null;
  previous: string | null;
  results: CasUser[];
}

/** Audience (resource name) of tokens the user-search API accepts. */
export const CAS_API_AUDIENCE = 'cas-api';

/** Scopes a client-credentials token needs for user search (spec §5.3 "User on-boarding"), all of them. */
export const CAS_API_USER_SEARCH_SCOPES = ['adminui-api-wrapper', 'adminui-api-wrapper.users.search'] as const;
