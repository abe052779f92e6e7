import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { Choice, Text } from '@collect/contracts';
import { RejectUnknownFields } from '@collect/platform';
import type { ValidationArguments } from 'class-validator';
import type { NewApplication } from './oauth2.entities.js';
import { isAllowedRedirectUri, splitRedirectUris } from './redirect-uris.js';

const badRedirectUri = (args: ValidationArguments) =>
  `Invalid redirect URI: ${(splitRedirectUris(String(args.value)).find((u) => !isAllowedRedirectUri(u)) ?? '').slice(0, 200)} (absolute http or https URL without fragment).`;
const redirectUris = { test: (v: string) => splitRedirectUris(v).every(isAllowedRedirectUri), message: badRedirectUri };

/**
 * `POST /api/v1/oauth-applications` (docs/api-conventions.md §Local OAuth 2.0 provider). Strict: a misspelt field of a
 * credential-issuing registration is an error, not a silent default (docs/security.md).
 */
@RejectUnknownFields()
export class CreateOAuthApplicationDto {
  @Text({ required: true, trim: true, blank: 'missing', max: 255 })
  name: string;

  @Choice(['confidential', 'public'], { default: 'confidential', description: 'A public client has no secret and must use PKCE.' })
  client_type?: 'confidential' | 'public';

  /** The spec prose's `authorization_code` and the DRF providers' `authorization-code` alike. */
  @Choice(['authorization-code'], { normalise: (v) => v.replace('_', '-'), default: 'authorization-code' })
  authorization_grant_type?: string;

  @ValidateIf((dto: CreateOAuthApplicationDto) => dto.redirect_uri === undefined)
  @Text({ required: true, trim: true, blank: 'missing', check: redirectUris, description: 'Space-separated absolute http(s) URLs (one is fine).' })
  redirect_uris?: string;

  @ValidateIf((dto: CreateOAuthApplicationDto) => dto.redirect_uris === undefined)
  @Text({ trim: true, blank: 'missing', check: redirectUris, description: 'Alias of redirect_uris.' })
  redirect_uri?: string;
}

/** The registration a CreateOAuthApplicationDto asks for. */
export function applicationInput(dto: CreateOAuthApplicationDto): NewApplication {
  return { name: dto.name, clientType: dto.client_type ?? 'confidential', redirectUris: splitRedirectUris(dto.redirect_uris ?? dto.redirect_uri ?? '') };
}

/**
 * `POST /o/token` (form-encoded). Every parameter is optional text here: which ones a grant
 * needs, and the RFC 6749 error when one is missing, is the token endpoint's rule
 * (OAuth2Service). Unknown parameters are ignored (RFC 6749 §3.2).
 */
export class TokenRequestDto {
  @Text() grant_type?: string;
  @Text() code?: string;
  @Text() redirect_uri?: string;
  @Text() code_verifier?: string;
  @Text() refresh_token?: string;
  @Text() scope?: string;
  @Text() client_id?: string;
  @Text() client_secret?: string;
}

/** The parameters of an authorization request (RFC 6749 §4.1.1, RFC 7636). */
export interface AuthorizeParams {
  client_id?: string;
  response_type?: string;
  redirect_uri?: string;
  scope?: string;
  state?: string;
  code_challenge?: string;
  code_challenge_method?: string;
}

/** `GET /o/authorize`. */
export class AuthorizeQueryDto implements AuthorizeParams {
  @Text() client_id?: string;
  @Text() response_type?: string;
  @Text() redirect_uri?: string;
  @Text() scope?: string;
  @Text() state?: string;
  @Text() code_challenge?: string;
  @Text() code_challenge_method?: string;
}

/** `POST /o/authorize`: the consent form sends the request back with the decision. */
export class AuthorizeDecisionDto extends AuthorizeQueryDto {
  @Text() csrf_token?: string;
  @Text() decision?: string;
}

/** `POST /o/login` (the login page's form). */
export class LoginFormDto {
  @Text() username?: string;
  @Text() password?: string;
  @Text() next?: string;
  @Text() csrf_token?: string;
}

/** A registered client application (`client_secret` only in the answer to its creation). */
export class ApplicationBody {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty({ type: 'string', format: 'uri' })
  url: string;

  @ApiProperty({ type: 'string' })
  client_id: string;

  @ApiPropertyOptional({ type: 'string', description: 'Confidential clients, once: in the answer to the registration only.' })
  client_secret?: string;

  @ApiProperty({ type: 'string' })
  name: string;

  @ApiProperty({ type: 'string', enum: ['confidential', 'public'] })
  client_type: string;

  @ApiProperty({ type: 'string', enum: ['authorization-code'] })
  authorization_grant_type: string;

  @ApiProperty({ type: 'string', description: 'Space-separated.' })
  redirect_uris: string;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The user who registered it (null: the admin command without --owner).' })
  owner: number | null;

  @ApiProperty({ type: 'string', format: 'date-time' })
  created: string;
}

/** RFC 6749 §5.1 (with the rotating refresh token). */
export class TokenResponse {
  @ApiProperty({ type: 'string' })
  access_token: string;

  @ApiProperty({ type: 'string', enum: ['Bearer'] })
  token_type: 'Bearer';

  @ApiProperty({ type: 'integer', description: 'Seconds (OAUTH2_ACCESS_TOKEN_EXPIRE_SECONDS).' })
  expires_in: number;

  @ApiProperty({ type: 'string', description: 'Single use: the next refresh returns a new one.' })
  refresh_token: string;

  @ApiProperty({ type: 'string', description: 'Space-separated: read, write, groups.' })
  scope: string;
}

/** RFC 6749 §5.2: the token endpoint's refusals. */
export class OAuthErrorBody {
  @ApiProperty({ type: 'string', enum: ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope', 'slow_down'] })
  error: string;

  @ApiPropertyOptional({ type: 'string' })
  error_description?: string;
}
