import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CollectConfig } from '../config/collect-config.js';
import { apiResources } from './api-resources.js';

@ApiTags('root')
@Controller('api/v1')
export class RootController {
  constructor(private readonly config: CollectConfig) {}

  @Get()
  @ApiOperation({ summary: 'API root: resource names to absolute URLs.' })
  @ApiOkResponse({ schema: { type: 'object', additionalProperties: { type: 'string', format: 'uri' }, example: { forms: 'https://collect.example.org/api/v1/forms' } } })
  root(): Record<string, string> {
    return Object.fromEntries(apiResources.map((name) => [name, `${this.config.PUBLIC_BASE_URL}/api/v1/${name}`]));
  }
}
