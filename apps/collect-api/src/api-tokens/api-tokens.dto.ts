import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IntList, MAX_DB_ID, Text, TextList } from '@collect/contracts';
import { RejectUnknownFields } from '@collect/platform';
import { PERSONAL_TOKEN_SCOPES, type PersonalTokenScope } from '../auth/authenticated-user.js';

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * `POST /api/v1/api-tokens` (docs/auth.md, "Personal access tokens"). Strict: a misspelt field
 * of a credential-issuing request is an error, not a silent default (docs/security.md).
 */
@RejectUnknownFields()
export class CreateApiTokenDto {
  @Text({ required: true, trim: true, blank: 'missing', max: 100, description: 'What the token is for (shown in listings).' })
  name: string;

  @TextList({
    required: true, minItems: 1, maxItems: 3, unique: true,
    pattern: new RegExp(`^(${PERSONAL_TOKEN_SCOPES.join('|')})$`), patternMessage: 'Each scope is one of read, submit, write.',
    description: '`read`: every GET the user may make; `submit`: what a phone needs (intake, formList, form download, manifests, media); `write`: read, submit and every change the roles allow.',
  })
  scopes: PersonalTokenScope[];

  @IntList({ nullable: true, minItems: 1, maxItems: 1_000, unique: true, min: 1, max: MAX_DB_ID, description: 'Form ids the token is narrowed to; null or absent: every form of the user.' })
  forms?: number[] | null;

  @Text({
    nullable: true, pattern: ISO_INSTANT, patternMessage: 'An ISO 8601 instant with a time zone, e.g. 2027-01-31T00:00:00Z.',
    check: { test: (v) => Number.isFinite(Date.parse(v)), message: 'Not a valid date.' },
    format: 'date-time', description: 'Default: 90 days ahead (or API_TOKEN_MAX_DAYS when shorter); at most API_TOKEN_MAX_DAYS ahead.',
  })
  expires_at?: string | null;
}

/** `GET /api/v1/api-tokens?user=`. */
export class ApiTokensQueryDto {
  @Text({ max: 150, description: "Platform admins: another user's tokens (by username)." })
  user?: string;
}

/** A personal token as listed (never the token itself). */
export class ApiTokenBody {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'The first 12 characters of the token.' }) prefix: string;
  @ApiProperty({ enum: PERSONAL_TOKEN_SCOPES, isArray: true }) scopes: PersonalTokenScope[];
  @ApiProperty({ type: [Number], nullable: true }) forms: number[] | null;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, description: 'Null before the first use; then at most 60 s behind.' }) last_used_at: string | null;
}

/** The answer of a creation: the only time the token is shown. */
export class CreatedApiTokenBody extends ApiTokenBody {
  @ApiPropertyOptional({ description: 'The token, shown in this answer only.' }) token: string;
}

/** The fields of the /tokens page's forms (form-encoded); what they must hold is checked by its controller, to answer with the page. */
export class TokensPageFormDto {
  @Text() csrf_token?: string;
  @Text() name?: string;
  @Text() scope?: string;
}
