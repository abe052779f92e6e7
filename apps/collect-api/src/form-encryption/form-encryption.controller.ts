import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { CreateFormEncryptionDto, FormEncryptionBody } from './form-encryption.dto.js';
import { FormEncryptionService } from './form-encryption.service.js';

/** Keys of encrypted forms (docs/encryption.md). */
@ApiTags('forms')
@RequireAuth()
@Controller('api/v1/forms')
export class FormEncryptionController {
  constructor(private readonly encryption: FormEncryptionService) {}

  @Post(':pk/encryption')
  @HttpCode(201)
  @ApiOperation({ summary: 'Gives the form a key (owner or manager): a new form version carrying the public key, so ODK clients encrypt every later submission. Modes self, passphrase, server.' })
  @ApiCreatedResponse({ type: FormEncryptionBody })
  create(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Body() body: CreateFormEncryptionDto): Promise<FormEncryptionBody> {
    return this.encryption.create(user, pk, body);
  }

  @Get(':pk/encryption')
  @ApiOperation({ summary: 'The key of the form\'s current version (readonly and above); 404 when it is not encrypted.' })
  @ApiOkResponse({ type: FormEncryptionBody })
  get(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string): Promise<FormEncryptionBody> {
    return this.encryption.get(user, pk);
  }
}
