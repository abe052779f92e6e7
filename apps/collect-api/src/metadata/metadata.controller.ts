import { Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { CollectConfig } from '../config/collect-config.js';
import { unsupportedMediaType } from '../forms/forms.service.js';
import type { FormEntity } from '../forms/form.entity.js';
import { contentTypeOf, readMultipartForm, type MultipartForm } from '../openrosa/body.js';
import { MetadataBody, MetadataQueryDto } from './metadata.dto.js';
import { MetadataService } from './metadata.service.js';

/** Form media files (`data_type=media`), as the Django implementation names the resource. */
@ApiTags('metadata')
@RequireAuth()
@Controller('api/v1/metadata')
export class MetadataController {
  constructor(private readonly metadata: MetadataService, private readonly config: CollectConfig) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Attaches a media file to a form (editor and above): multipart `xform`, `data_type=media`, `data_value` (file name), `data_file`.' })
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: {
      type: 'object',
      required: ['xform', 'data_type', 'data_file'],
      properties: {
        xform: { type: 'integer' },
        data_type: { type: 'string', enum: ['media'] },
        data_value: { type: 'string', description: "The file name the form refers to; defaults to data_file's name." },
        data_file: { type: 'string', format: 'binary' },
      },
    },
  })
  @ApiCreatedResponse({ type: MetadataBody })
  async create(@CurrentUser() user: AuthenticatedUser, @Req() req: IncomingMessage, @Res({ passthrough: true }) res: ServerResponse): Promise<MetadataBody> {
    if (contentTypeOf(req) !== 'multipart/form-data') throw unsupportedMediaType('Send multipart/form-data with xform, data_type, data_value and data_file.');
    // Fields, name and role are checked when the file part begins, before its bytes are read.
    let checked: FormEntity | undefined;
    let upload: MultipartForm;
    try {
      upload = await readMultipartForm(req, ['data_file'], this.config.FORM_MEDIA_MAX_BYTES, {
        beforeFile: async (fields, file) => void (checked = await this.metadata.checkUpload(user, fields, file)),
      });
    } catch (err) {
      // Refused before the end of the body: close, so that the rest is never read.
      if (!req.complete) res.setHeader('Connection', 'close');
      throw err;
    }
    return this.metadata.create(user, upload, checked);
  }

  @Get()
  @ApiOperation({ summary: 'Media files of a form (`?xform=`, readonly and above) or of every form the caller sees.' })
  @ApiOkResponse({ type: MetadataBody, isArray: true })
  list(@CurrentUser() user: AuthenticatedUser, @Query() query: MetadataQueryDto): Promise<MetadataBody[]> {
    return this.metadata.list(user, query.xform);
  }

  @Get(':pk')
  @ApiOkResponse({ type: MetadataBody })
  get(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string): Promise<MetadataBody> {
    return this.metadata.get(user, pk);
  }

  @Delete(':pk')
  @HttpCode(204)
  @ApiOperation({ summary: 'Removes a media file from its form (editor and above).' })
  @ApiNoContentResponse({ description: 'Deleted, with its stored bytes.' })
  async delete(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string): Promise<void> {
    await this.metadata.delete(user, pk);
  }
}
