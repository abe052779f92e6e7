import { ApiProperty } from '@nestjs/swagger';
import { Text } from '@collect/contracts';

const REQUIRED = 'code and state are required.';
const param = (description: string) => Text({ required: true, blank: 'missing', requiredMessage: REQUIRED, message: REQUIRED, asDetail: true, description });

/** The sheet provider's OAuth 2.0 consent redirect (RFC 6749 §4.1.2); other parameters are ignored. */
export class SheetsCallbackQueryDto {
  @param('The authorization code.')
  code: string;

  @param('The single-use state of the waiting spreadsheet service.')
  state: string;
}

/** The answer to the consent redirect. */
export class SheetsCallbackBody {
  @ApiProperty({ type: 'string' })
  detail: string;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The spreadsheet service now linked to its sheet.' })
  restservice: number | null;
}
