import { Int, Text } from '@collect/contracts';
import { RejectUnknownFields } from '@collect/platform';

const MAX_TEXT = 254;
const ONCE = 'Give this parameter once, as text.';
const TOO_LONG = `Ensure this value has at most ${MAX_TEXT} characters.`;
const POSITIVE = 'A valid positive integer is required.';

/**
 * `GET /api/users` of cas-api. Strict: the API serves machines (collect-api's on-boarding), for
 * which an unknown parameter is a bug to report, not to ignore (docs/security.md).
 */
@RejectUnknownFields()
export class UserSearchQueryDto {
  @Text({ trim: true, blank: 'missing', max: MAX_TEXT, typeMessage: ONCE, message: TOO_LONG, description: 'Case-insensitive substring of username, email, given, family or full name.' })
  search?: string;

  @Text({ max: MAX_TEXT, typeMessage: ONCE, message: TOO_LONG, description: 'Exact username (case-insensitive).' })
  username?: string;

  @Text({ max: MAX_TEXT, typeMessage: ONCE, message: TOO_LONG, description: 'Exact email (case-insensitive).' })
  email?: string;

  @Int({ min: 1, max: 999_999_999, blankIsMissing: true, message: POSITIVE, default: 1, description: '1-based; past the last page: 404.' })
  page?: number;

  @Int({ min: 1, max: 999_999_999, blankIsMissing: true, message: POSITIVE, default: 20, description: 'Larger values are clamped to 100.' })
  page_size?: number;
}
