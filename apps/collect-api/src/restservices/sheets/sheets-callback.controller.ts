import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { SheetsCallbackBody, SheetsCallbackQueryDto } from './sheets.dto.js';
import { SheetsService } from './sheets.service.js';

/**
 * The OAuth 2.0 consent redirect of the sheet provider. No credentials: the browser arrives
 * from the provider; the single-use `state` names the user and the waiting service. A client
 * that set its own `redirect_uri` forwards `code` and `state` here.
 */
@ApiTags('restservices')
@Controller('api/v1/restservices/sheets')
export class SheetsCallbackController {
  constructor(private readonly sheets: SheetsService) {}

  @Get('callback')
  @ApiOperation({ summary: 'Stores the sheet provider grant and links the waiting spreadsheet service.' })
  @ApiOkResponse({ type: SheetsCallbackBody })
  callback(@Query() query: SheetsCallbackQueryDto): Promise<SheetsCallbackBody> {
    return this.sheets.callback(query.code, query.state);
  }
}
