import { createHash } from 'node:crypto';
import { Controller, Get, Inject, Param, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { FormsRepository } from '../forms/forms.repository.js';
import { FormsService } from '../forms/forms.service.js';
import { MIN_ROLE, roleAtLeast } from '../forms/roles.js';
import { FormListQueryDto } from './openrosa.dto.js';
import { escapeXml } from './xml.js';

type Res = { status(code: number): Res; setHeader(name: string, value: string): void; send(body: string): void };

/**
 * OpenRosa form discovery (`GET /formList`) and download (`GET /forms/{pk}/form.xml`), so ODK
 * Collect and Enketo pointed at the server's base URL find the forms they may submit to.
 */
@ApiTags('openrosa')
@RequireAuth()
@Controller()
export class FormListController {
  constructor(
    private readonly forms: FormsRepository,
    private readonly formsService: FormsService,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {}

  @Get('formList')
  @ApiOperation({ summary: 'OpenRosa xformsList of the forms the caller may submit to (dataentry and above, accepting submissions).' })
  @ApiProduces('text/xml')
  @ApiOkResponse({ schema: { type: 'string', description: 'An OpenRosa `<xforms>` document.' } })
  async list(@CurrentUser() user: AuthenticatedUser, @Query() { formID }: FormListQueryDto, @Res() res: Res): Promise<void> {
    const rows = await this.forms.visibleTo(user.isSuperuser ? 'all' : user.id);
    const items = rows
      .filter(({ form, role }) => form.acceptingSubmissions && (user.isSuperuser || roleAtLeast(role, MIN_ROLE.submit)))
      .filter(({ form }) => formID === undefined || form.idString === formID)
      .map(({ form }) =>
        [
          '<xform>',
          `<formID>${escapeXml(form.idString)}</formID>`,
          `<name>${escapeXml(form.title)}</name>`,
          `<version>${escapeXml(form.version)}</version>`,
          `<hash>md5:${createHash('md5').update(form.xml).digest('hex')}</hash>`,
          `<downloadUrl>${escapeXml(`${this.config.PUBLIC_BASE_URL}/forms/${form.id}/form.xml`)}</downloadUrl>`,
          '</xform>',
        ].join(''),
      );
    this.send(res, `<?xml version="1.0" encoding="UTF-8"?><xforms xmlns="http://openrosa.org/xforms/xformsList">${items.join('')}</xforms>`);
  }

  @Get('forms/:pk/form.xml')
  @ApiOperation({ summary: 'The XForm document (readonly and above).' })
  @ApiProduces('text/xml')
  @ApiOkResponse({ schema: { type: 'string', description: 'The XForm document.' } })
  async download(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Res() res: Res): Promise<void> {
    this.send(res, await this.formsService.getXml(user, pk));
  }

  private send(res: Res, xml: string): void {
    res.setHeader('X-OpenRosa-Version', '1.0');
    res.setHeader('Content-Type', 'text/xml; charset=utf-8');
    res.status(200).send(xml);
  }
}
