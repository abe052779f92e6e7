import { createHash } from 'node:crypto';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { UserEntity } from './user.entity.js';

/** The profile shape of docs/api-conventions.md §Users and tokens (DRF world): snake_case, absolute URLs. */
export class ProfileBody {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty({ type: 'string', format: 'uri' })
  url: string;

  @ApiProperty({ type: 'string' })
  username: string;

  @ApiProperty({ type: 'string', description: 'first_name and last_name joined by a space.' })
  name: string;

  @ApiProperty({ type: 'string' })
  first_name: string;

  @ApiProperty({ type: 'string' })
  last_name: string;

  @ApiProperty({ type: 'string', description: 'Empty unless the caller is the user or a platform admin.' })
  email: string;

  @ApiProperty({ type: 'string' })
  city: string;

  @ApiProperty({ type: 'string', description: 'ISO 3166-1 alpha-2.' })
  country: string;

  @ApiProperty({ type: 'string' })
  organization: string;

  @ApiProperty({ type: 'string' })
  website: string;

  @ApiProperty({ type: 'string' })
  twitter: string;

  @ApiProperty({ type: 'string', format: 'uri' })
  gravatar: string;

  @ApiProperty({ type: 'boolean' })
  require_auth: boolean;

  @ApiProperty({ type: 'string', format: 'uri', description: 'The `/api/v1/users/{username}` address.' })
  user: string;

  /** Present for the user themself and platform admins only (who administers is not public). */
  @ApiPropertyOptional({ type: 'boolean', description: 'Only for the user themself and platform admins.' })
  is_superuser?: boolean;

  @ApiProperty({ type: 'string', format: 'date-time' })
  joined_on: string;
}

/** `GET /api/v1/users/{username}`: the public fields. */
export class PublicUserBody {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty({ type: 'string' })
  username: string;

  @ApiProperty({ type: 'string' })
  first_name: string;

  @ApiProperty({ type: 'string' })
  last_name: string;
}

/**
 * `email` and `is_superuser` are shown to the user themself and platform admins only
 * (`showPrivate`): an anonymous caller must not learn which accounts administer the platform.
 */
export function presentProfile(user: UserEntity, baseUrl: string, showPrivate: boolean): ProfileBody {
  const username = encodeURIComponent(user.username);
  return {
    id: user.id,
    url: `${baseUrl}/api/v1/profiles/${username}`,
    username: user.username,
    name: [user.firstName, user.lastName].filter(Boolean).join(' '),
    first_name: user.firstName,
    last_name: user.lastName,
    email: showPrivate ? user.email : '',
    city: user.city,
    country: user.country,
    organization: user.organization,
    website: user.website,
    twitter: user.twitter,
    gravatar: gravatarUrl(user.email),
    require_auth: user.requireAuth,
    user: `${baseUrl}/api/v1/users/${username}`,
    ...(showPrivate ? { is_superuser: user.isSuperuser } : {}),
    joined_on: new Date(user.dateJoined).toISOString(),
  };
}

export function gravatarUrl(email: string): string {
  const digest = createHash('md5').update(email.trim().toLowerCase()).digest('hex');
  return `https://secure.gravatar.com/avatar/${digest}?s=60&d=mp`;
}
