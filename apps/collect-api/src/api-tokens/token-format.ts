import { randomBytes } from 'node:crypto';
import { PERSONAL_TOKEN_PREFIX } from '../auth/personal-tokens.js';

/** `cpat_` and 256 random bits in base64url: 48 characters. */
export const TOKEN_LENGTH = PERSONAL_TOKEN_PREFIX.length + 43;
/** The part of a token stored in clear to find its row (and shown in listings): `cpat_` and 7 more. */
export const PREFIX_LENGTH = 12;

/** A new personal access token (docs/auth.md, "Personal access tokens"). */
export function newPersonalToken(): string {
  return `${PERSONAL_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}
