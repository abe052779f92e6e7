import { ApiProperty } from '@nestjs/swagger';
import { CasUser, Text } from '@collect/contracts';
import { RejectUnknownFields } from '@collect/platform';

/** A username of an on-boarded user or service account. */
export const LOCAL_USERNAME = /^[\w.@+-]{1,150}$/;
export const USERNAME_MESSAGE = 'Enter a valid username: letters, digits and @ . + - _ only.';
const ONCE = 'Give this parameter once, as plain text.';

/** `GET /api/v1/cas-users`: passed on to the CAS user-search API, which checks the values. */
export class CasUserSearchQueryDto {
  @Text({ message: ONCE, description: 'Case-insensitive substring of username, email or name.' })
  search?: string;

  @Text({ message: ONCE, description: '1-based.' })
  page?: string;

  @Text({ message: ONCE, description: 'At most 100.' })
  page_size?: string;
}

const username = () =>
  Text({ trim: true, blank: 'refuse', max: 150, pattern: LOCAL_USERNAME, patternMessage: USERNAME_MESSAGE, description: 'The local username (default: the CAS username, or the client id).' });

/** `POST /api/v1/cas-users` (platform admins). Strict, as every request that grants access (docs/security.md). */
@RejectUnknownFields()
export class OnboardCasUserDto {
  @Text({ required: true, trim: true, blank: 'refuse', max: 255, description: 'The CAS subject (its user id).' })
  cas_user_id: string;

  @username()
  username?: string;
}

/** `POST /api/v1/service-accounts` (platform admins). Strict. */
@RejectUnknownFields()
export class CreateServiceAccountDto {
  @Text({ required: true, trim: true, blank: 'refuse', max: 255, pattern: /^[\w.:@+-]{1,255}$/, patternMessage: 'Enter a valid client id: letters, digits and . : @ + - _ only.', description: 'The CAS client (client credentials).' })
  client_id: string;

  @username()
  username?: string;
}

/**
 * A local user linked to the CAS. Its first fields read like the CAS's own user (`CasUser` of
 * @collect/contracts) on purpose, not by copy: this is collect-api's account as its profile API
 * answers it (Django's field names), that is the CAS's, and each may change with its service.
 */
export class LocalUserBody {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty({ type: 'string' })
  username: string;

  @ApiProperty({ type: 'string' })
  email: string;

  @ApiProperty({ type: 'string' })
  first_name: string;

  @ApiProperty({ type: 'string' })
  last_name: string;

  @ApiProperty({ type: 'boolean', description: 'false once off-boarded (forms and roles stay).' })
  is_active: boolean;

  @ApiProperty({ type: 'string', format: 'date-time' })
  date_joined: string;
}

/** An on-boarded CAS user. */
export class OnboardedUserBody extends LocalUserBody {
  @ApiProperty({ type: 'string', format: 'uuid', description: 'The CAS subject.' })
  cas_user_id: string;
}

/** A CAS client acting as a local service account. */
export class ServiceAccountBody extends LocalUserBody {
  @ApiProperty({ type: 'string' })
  client_id: string;
}

/** The local user of a CAS user, when there is one. */
export class LinkedLocalUser {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty({ type: 'string' })
  username: string;

  @ApiProperty({ type: 'boolean' })
  is_active: boolean;
}

/** A CAS user (cas-api) with its on-boarding state here. */
export class CasUserResult extends CasUser {
  @ApiProperty({ type: 'boolean', description: 'An active local user is linked.' })
  onboarded: boolean;

  @ApiProperty({ type: () => LinkedLocalUser, nullable: true })
  local_user: LinkedLocalUser | null;
}

/** `GET /api/v1/cas-users`: cas-api's page, links pointing here. */
export class CasUsersPage {
  @ApiProperty({ type: 'integer' })
  count: number;

  @ApiProperty({ type: 'string', format: 'uri', nullable: true })
  next: string | null;

  @ApiProperty({ type: 'string', format: 'uri', nullable: true })
  previous: string | null;

  @ApiProperty({ type: () => CasUserResult, isArray: true })
  results: CasUserResult[];
}
