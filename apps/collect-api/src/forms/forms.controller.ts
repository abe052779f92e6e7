import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiExtraModels, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { IncomingMessage } from 'node:http';
import { FieldValidationError } from '@collect/contracts';
import { validateInput } from '@collect/platform';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { SubmitClass } from '../auth/scope-class.decorator.js';
import { CollectConfig } from '../config/collect-config.js';
import { contentTypeOf, isXmlContentType, readMultipartForm, readRawBody } from '../openrosa/body.js';
import { FormBody, FormFieldBody, JsonFormDefinitionDto, ShareFormDto, UpdateFormDto } from './form.dto.js';
import { setInertHeaders } from '../storage/served-content.js';
import { FormsService, unsupportedMediaType, type FormUpload } from './forms.service.js';

/** The bodies that carry a form definition (POST, and PATCH replacing one). */
const DEFINITION_BODIES = [
  { $ref: getSchemaPath(JsonFormDefinitionDto) },
  { type: 'string', description: 'application/xml: the XForm document.' },
  {
    type: 'object',
    description: 'multipart/form-data: one of the two parts.',
    properties: {
      xls_file: { type: 'string', format: 'binary', description: 'An XLSForm workbook (.xlsx), converted in the platform.' },
      xml_file: { type: 'string', format: 'binary', description: 'The XForm document.' },
    },
  },
];

/** Forms: create from XForm XML or a JSON definition, list, read, update, soft delete, share. */
@ApiTags('forms')
@RequireAuth()
@Controller('api/v1/forms')
export class FormsController {
  constructor(private readonly forms: FormsService, private readonly config: CollectConfig) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Creates a form: multipart `xls_file` (XLSForm .xlsx) or `xml_file` (XForm), an application/xml body, or a JSON definition. A conversion failure is 400 `{"detail", "errors", "warnings"}`.' })
  @ApiExtraModels(JsonFormDefinitionDto)
  @ApiConsumes('application/json', 'application/xml', 'multipart/form-data')
  @ApiBody({ schema: { oneOf: DEFINITION_BODIES } })
  @ApiCreatedResponse({ type: FormBody })
  async create(@CurrentUser() user: AuthenticatedUser, @Req() req: IncomingMessage & { body?: unknown }): Promise<FormBody> {
    const type = contentTypeOf(req);
    if (type === 'application/json') return this.forms.create(user, { json: await validateInput(JsonFormDefinitionDto, req.body) });
    if (isXmlContentType(type)) return this.forms.create(user, { xml: await readRawBody(req, this.config.FORM_MAX_BYTES) });
    if (type === 'multipart/form-data') {
      const upload = await this.readUpload(req);
      if (!upload) throw new FieldValidationError({ xls_file: ['No xls_file (XLSForm) or xml_file (XForm) part in the upload.'] });
      return this.forms.create(user, upload);
    }
    throw unsupportedMediaType('Send multipart/form-data (xls_file or xml_file), application/xml or application/json.');
  }

  /** The definition part of a multipart upload: `xls_file` (XLSForm) or `xml_file` (XForm); null when neither. */
  private async readUpload(req: IncomingMessage): Promise<FormUpload | null> {
    const { files } = await readMultipartForm(req, ['xls_file', 'xml_file'], this.config.FORM_MAX_BYTES);
    if (files.xls_file) return { xlsx: files.xls_file.data, filename: files.xls_file.filename };
    if (files.xml_file) return { xml: files.xml_file.data.toString('utf8') };
    return null;
  }

  @Get()
  @ApiOkResponse({ type: FormBody, isArray: true })
  list(@CurrentUser() user: AuthenticatedUser): Promise<FormBody[]> {
    return this.forms.list(user);
  }

  @Get(':pk')
  @ApiOkResponse({ type: FormBody })
  get(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string): Promise<FormBody> {
    return this.forms.get(user, pk);
  }

  @Get(':pk/form.xml')
  @SubmitClass()
  @ApiOperation({ summary: 'The XForm document, as an inert attachment (CSP sandbox, nosniff).' })
  @ApiProduces('application/xml')
  @ApiOkResponse({ schema: { type: 'string', description: 'The XForm document.' } })
  async xml(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Res() res: { setHeader(name: string, value: string): void; status(code: number): { send(body: string): void } }): Promise<void> {
    const form = await this.forms.getDocument(user, pk);
    // The document is the uploader's bytes: an XHTML <h:script> in it must never run (docs/security.md).
    setInertHeaders(res, `${form.idString}.xml`);
    res.setHeader('Content-Type', 'application/xml; charset=utf-8');
    res.status(200).send(form.xml);
  }

  @Get(':pk/fields')
  @ApiOperation({ summary: 'The questions in form order (xpath, type, label).' })
  @ApiOkResponse({ type: FormFieldBody, isArray: true })
  fields(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string) {
    return this.forms.fields(user, pk);
  }

  @Patch(':pk')
  @ApiOperation({
    summary:
      'Changes `title` and `downloadable` (accepting submissions), or replaces the definition: multipart `xls_file` / `xml_file`, an application/xml body, or a JSON definition (a body with `fields`). The submissions stay; the form gets a new `version`. Manager or owner.',
  })
  @ApiExtraModels(UpdateFormDto, JsonFormDefinitionDto)
  @ApiConsumes('application/json', 'application/xml', 'multipart/form-data')
  @ApiBody({ schema: { oneOf: [{ $ref: getSchemaPath(UpdateFormDto) }, ...DEFINITION_BODIES] } })
  @ApiOkResponse({ type: FormBody })
  async update(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Req() req: IncomingMessage & { body?: unknown }): Promise<FormBody> {
    const type = contentTypeOf(req);
    if (type === 'multipart/form-data') {
      const upload = await this.readUpload(req);
      if (!upload) throw new FieldValidationError({ xls_file: ['No xls_file (XLSForm) or xml_file (XForm) part in the upload.'] });
      return this.forms.replace(user, pk, upload);
    }
    if (isXmlContentType(type)) return this.forms.replace(user, pk, { xml: await readRawBody(req, this.config.FORM_MAX_BYTES) });
    const body = req.body ?? {};
    // A JSON definition has `fields`; a body without is a change of title/downloadable.
    if (body && typeof body === 'object' && 'fields' in body) return this.forms.replace(user, pk, { json: await validateInput(JsonFormDefinitionDto, body) });
    return this.forms.update(user, pk, await validateInput(UpdateFormDto, body));
  }

  @Delete(':pk')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Deleted (soft: the submissions stay).' })
  async delete(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string): Promise<void> {
    await this.forms.delete(user, pk);
  }

  @Put(':pk/share')
  @HttpCode(204)
  @ApiOperation({ summary: 'Gives `username` the `role` on the form (or takes it away with `remove: true`); manager or owner.' })
  @ApiNoContentResponse({ description: 'Shared.' })
  async share(@CurrentUser() user: AuthenticatedUser, @Param('pk') pk: string, @Body() body: ShareFormDto): Promise<void> {
    await this.forms.share(user, pk, body);
  }
}
