import { createHash } from 'node:crypto';
import type { UserEntity } from './user.entity.js';

/** The profile shape of decisions.md §Users, tokens (DRF world): snake_case, absolute URLs. */
export interface ProfileBody {
  id: number;
  url: string;
  username: string;
  name: string;
  first_name: string;
  last_name: string;
  email: string;
  city: string;
  country: string;
  organization: string;
  website: string;
  twitter: string;
  gravatar: string;
  require_auth: boolean;
  user: string;
  /** Present for the user themself and platform admins only (who administers is not public). */
  is_superuser?: boolean;
  joined_on: string;
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
