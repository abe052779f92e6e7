import { Body, Controller, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { ServerResponse } from 'node:http';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { ReadSlots } from '../database/read-slots.js';
import { exportOptions } from '../exports/export.dto.js';
import { EXPORT_CONTENT_TYPES } from '../exports/exports.controller.js';
import { setInertHeaders } from '../storage/served-content.js';
import { DecryptExportService } from './decrypt-export.service.js';
import { DecryptExportDto, type DecryptFormat } from './decrypt.dto.js';

const CONTENT_TYPES: Record<DecryptFormat, string> = { ...EXPORT_CONTENT_TYPES, json: 'application/json; charset=utf-8' };

/** `POST /api/v1/forms/{pk}/decrypt` (docs/encryption.md "Decrypting without a server-held key"). */
@ApiTags('forms')
@RequireAuth()
@Controller('api/v1/forms')
export class DecryptController {
  constructor(
    private readonly decrypt: DecryptExportService,
    private readonly slots: ReadSlots,
  ) {}

  @Post(':pk/decrypt')
  @HttpCode(200)
  @ApiOperation({ summary: "Streams a decrypted export of the form's encrypted submissions (readonly and above) with the passphrase or the private key, which are never stored, logged or queued. Wrong passphrase or key: 400. Rate-limited like a credential check." })
  @ApiProduces(CONTENT_TYPES.csv, CONTENT_TYPES.xlsx, CONTENT_TYPES.zip, CONTENT_TYPES.json)
  @ApiOkResponse({ schema: { type: 'string', format: 'binary' } })
  async export(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Body() body: DecryptExportDto, @Res() res: ServerResponse): Promise<void> {
    // A read slot (docs/security.md, "Streamed reads and heavy queries"): the per-user limit and
    // the deadline of a response that stops draining.
    await this.slots.open(user.id, res);
    const prepared = await this.decrypt.prepare(user, pk, body);
    // The request's copy of the key material is not needed past this point.
    body.passphrase = undefined;
    body.private_key = undefined;
    const write = await this.decrypt.writer(prepared, body.format, exportOptions(body));
    res.statusCode = 200;
    res.setHeader('Content-Type', CONTENT_TYPES[body.format]);
    setInertHeaders(res, `${prepared.form.idString}-decrypted.${body.format}`);
    try {
      await write(res);
      if (!res.writableEnded) res.end();
    } catch (err) {
      res.destroy(err as Error);
    }
  }
}
