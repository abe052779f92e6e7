import { createHash } from 'node:crypto';
import { applyDecorators, Controller, Get, NotFoundException, Param, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import { tokenAllowsForm, type AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { SubmitClass } from '../auth/scope-class.decorator.js';
import { CollectConfig } from '../config/collect-config.js';
import type { FormEntity } from './form.entity.js';
import { FormsRepository } from './forms.repository.js';
import { FormsService } from './forms.service.js';
import { MIN_ROLE, roleAtLeast } from './roles.js';
import { FormListQueryDto } from './form-list.dto.js';
import { setInertHeaders } from '../storage/served-content.js';
import { setOpenRosaHeaders } from '../openrosa/openrosa-headers.js';
import { escapeXml } from '../openrosa/xml.js';
import { externalCsvNames } from './external-instances.js';

/** OpenAPI of an OpenRosa XML answer. */
const XmlAnswer = (description: string) => applyDecorators(ApiProduces('text/xml'), ApiOkResponse({ schema: { type: 'string', description } }));

type Res = { status(code: number): Res; setHeader(name: string, value: string): void; send(body: string): void };

/**
 * OpenRosa form discovery (`GET /formList`) and download (`GET /forms/{pk}/form.xml`), so ODK
 * Collect and Enketo pointed at the server's base URL find the forms they may submit to; and
 * the same per owner (`/{username}/formList`, `/{username}/forms/{pk}/form.xml`), as the
 * Django implementation has them, for a client whose server URL ends in the owner's name
 * (docs/forms.md). Every answer is inert: the documents are the uploaders' bytes.
 */
@ApiTags('openrosa')
@RequireAuth()
@SubmitClass()
@Controller()
export class FormListController {
  constructor(
    private readonly forms: FormsRepository,
    private readonly formsService: FormsService,
    private readonly config: CollectConfig,
  ) {}

  @Get('formList')
  @ApiOperation({ summary: 'OpenRosa xformsList of the forms the caller may submit to (dataentry and above, accepting submissions).' })
  @XmlAnswer('An OpenRosa `<xforms>` document.')
  async list(@CurrentUser() user: AuthenticatedUser, @Query() { formID }: FormListQueryDto, @Res() res: Res): Promise<void> {
    await this.sendList(res, await this.submittable(user, formID), (form) => `/forms/${form.id}/form.xml`, (form) => `/xformsManifest/${form.id}`);
  }

  @Get(':username/formList')
  @ApiOperation({ summary: "OpenRosa xformsList of the owner's forms the caller may submit to." })
  @XmlAnswer('An OpenRosa `<xforms>` document.')
  async ownerList(@CurrentUser() user: AuthenticatedUser, @Param('username') username: string, @Query() { formID }: FormListQueryDto, @Res() res: Res): Promise<void> {
    const ownerId = await this.forms.activeUserId(username);
    if (ownerId === null) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    const forms = (await this.submittable(user, formID)).filter((f) => f.ownerId === ownerId);
    await this.sendList(res, forms, (form) => `/${encodeURIComponent(username)}/forms/${form.id}/form.xml`, (form) => `/${encodeURIComponent(username)}/xformsManifest/${form.id}`);
  }

  @Get('forms/:pk/form.xml')
  @ApiOperation({ summary: 'The XForm document (readonly and above).' })
  @XmlAnswer('The XForm document.')
  async download(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Res() res: Res): Promise<void> {
    const form = await this.formsService.getDocument(user, pk);
    this.send(res, form.xml, `${form.idString}.xml`);
  }

  @Get(':username/forms/:pk/form.xml')
  @ApiOperation({ summary: 'The XForm document of a form of that owner (readonly and above).' })
  @XmlAnswer('The XForm document.')
  async ownerDownload(@CurrentUser() user: AuthenticatedUser, @Param('username') username: string, @Param('pk') pk: string, @Res() res: Res): Promise<void> {
    const form = await this.formsService.getDocument(user, pk);
    // Another owner's form under this name is "not found", never a redirect to it.
    if (form.ownerId !== (await this.forms.activeUserId(username))) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    this.send(res, form.xml, `${form.idString}.xml`);
  }

  private async submittable(user: AuthenticatedUser, formID: string | undefined): Promise<FormEntity[]> {
    const rows = await this.forms.visibleTo(user.isSuperuser ? 'all' : user.id);
    return rows
      .filter(({ form, role }) => form.acceptingSubmissions && (user.isSuperuser || roleAtLeast(role, MIN_ROLE.submit)) && tokenAllowsForm(user, form.id))
      .filter(({ form }) => formID === undefined || form.idString === formID)
      .map(({ form }) => form);
  }

  /**
   * Forms with media files get a `manifestUrl` (docs/forms.md, "Form media and the OpenRosa
   * manifest"), and so do forms that load a CSV file, which may be an entity list generated for
   * the form (docs/entities.md, "Follow-up forms and their list attachment").
   */
  private async sendList(res: Res, forms: FormEntity[], downloadPath: (form: FormEntity) => string, manifestPath: (form: FormEntity) => string): Promise<void> {
    const withMedia = await this.forms.formsWithMedia(forms.map((f) => f.id));
    const items = forms.map((form) =>
      [
        '<xform>',
        `<formID>${escapeXml(form.idString)}</formID>`,
        `<name>${escapeXml(form.title)}</name>`,
        `<version>${escapeXml(form.version)}</version>`,
        `<hash>md5:${createHash('md5').update(form.xml).digest('hex')}</hash>`,
        `<downloadUrl>${escapeXml(`${this.config.PUBLIC_BASE_URL}${downloadPath(form)}`)}</downloadUrl>`,
        withMedia.has(form.id) || externalCsvNames(form.xml).length ? `<manifestUrl>${escapeXml(`${this.config.PUBLIC_BASE_URL}${manifestPath(form)}`)}</manifestUrl>` : '',
        '</xform>',
      ].join(''),
    );
    this.send(res, `<?xml version="1.0" encoding="UTF-8"?><xforms xmlns="http://openrosa.org/xforms/xformsList">${items.join('')}</xforms>`, 'formList.xml');
  }

  private send(res: Res, xml: string, downloadName: string): void {
    setOpenRosaHeaders(res);
    setInertHeaders(res, downloadName);
    res.setHeader('Content-Type', 'text/xml; charset=utf-8');
    res.status(200).send(xml);
  }
}
