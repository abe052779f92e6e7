import { ApiProperty } from '@nestjs/swagger';

/**
 * The CAS user-administration API (`cas-api`, docs/api-conventions.md §Central authentication service):
 * what `GET /api/users` and `GET /api/users/{id}` answer. collect-api reads it when it
 * on-boards CAS users, so the shape lives here.
 */
export class CasUser {
  @ApiProperty({ type: 'string', format: 'uuid', description: 'The CAS subject (`sub` of this user\'s tokens).' })
  id: string;

  @ApiProperty({ type: 'string' })
  username: string;

  @ApiProperty({ type: 'string' })
  email: string;

  @ApiProperty({ type: 'string' })
  given_name: string;

  @ApiProperty({ type: 'string' })
  family_name: string;

  @ApiProperty({ type: 'string', description: 'given_name and family_name joined by a space; empty when both are.' })
  name: string;

  @ApiProperty({ type: 'boolean' })
  enabled: boolean;

  @ApiProperty({ type: 'string', format: 'date-time', description: 'ISO 8601, UTC.' })
  created_at: string;
}

/** DRF-style page: `next` / `previous` are absolute URLs or null. */
export class CasUserPage {
  @ApiProperty({ type: 'integer' })
  count: number;

  @ApiProperty({ type: 'string', format: 'uri', nullable: true })
  next: string | null;

  @ApiProperty({ type: 'string', format: 'uri', nullable: true })
  previous: string | null;

  @ApiProperty({ type: () => CasUser, isArray: true })
  results: CasUser[];
}

/** Audience (resource name) of tokens the user-search API accepts. */
export const CAS_API_AUDIENCE = 'cas-api';

/** Scopes a client-credentials token needs for user search (spec §5.3 "User on-boarding"), all of them. */
export const CAS_API_USER_SEARCH_SCOPES = ['adminui-api-wrapper', 'adminui-api-wrapper.users.search'] as const;
