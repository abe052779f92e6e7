import { Controller, Head, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiConsumes, ApiCreatedResponse, ApiExtraModels, ApiNoContentResponse, ApiOperation, ApiProduces, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { IncomingMessage } from 'node:http';
import { FieldValidationError, validateInput } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { unsupportedMediaType } from '../forms/forms.service.js';
import { recordFromJson, recordFromXml } from '../submissions/submission-record.js';
import { JsonSubmissionDto, SubmissionAck } from '../submissions/submission.dto.js';
import { SubmissionsService, type SubmissionResult } from '../submissions/submissions.service.js';
import { contentTypeOf } from './body.js';
import { isMultipart, readMultipartSubmission } from './multipart.js';
import { escapeXml, parseXml, XmlInputError } from './xml.js';

type Res = { status(code: number): Res; setHeader(name: string, value: string): void; send(body: string): void; json(body: unknown): void; end(): void };
type Req = IncomingMessage & { body?: unknown };

/** The OpenRosa multipart body: the instance XML and its attachments. */
const OPENROSA_MULTIPART = {
  type: 'object',
  required: ['xml_submission_file'],
  properties: { xml_submission_file: { type: 'string', format: 'binary', description: 'The instance XML.' } },
  additionalProperties: { type: 'string', format: 'binary', description: 'Attachments, by file name.' },
};

/**
 * Submission intake: JSON `{"id", "submission"}` and OpenRosa multipart (`xml_submission_file`
 * + attachments) at `POST /api/v1/submissions`, OpenRosa at `POST /submission` (XML answers).
 */
@ApiTags('submissions')
@Controller()
export class SubmissionController {
  constructor(
    private readonly submissions: SubmissionsService,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {}

  private openRosaHeaders(res: Res): void {
    res.setHeader('X-OpenRosa-Version', '1.0');
    res.setHeader('X-OpenRosa-Accept-Content-Length', String(this.config.ATTACHMENT_MAX_BYTES));
  }

  @Head('submission')
  @HttpCode(204)
  @ApiOperation({ summary: 'OpenRosa pre-flight: 204 with the OpenRosa headers.' })
  @ApiNoContentResponse({ description: 'X-OpenRosa-Version and X-OpenRosa-Accept-Content-Length.' })
  head(@Res() res: Res): void {
    this.openRosaHeaders(res);
    res.status(204).end();
  }

  @Post('submission')
  @RequireAuth()
  @ApiOperation({ summary: 'OpenRosa submission (multipart: xml_submission_file + attachments); answers OpenRosa XML.' })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ schema: OPENROSA_MULTIPART })
  @ApiProduces('text/xml')
  @ApiCreatedResponse({ schema: { type: 'string', description: 'OpenRosaResponse XML (`submit_success`).' } })
  @ApiAcceptedResponse({ schema: { type: 'string', description: 'OpenRosaResponse XML: the same instance again, nothing stored.' } })
  async openRosa(@CurrentUser() user: AuthenticatedUser, @Req() req: Req, @Res() res: Res): Promise<void> {
    this.openRosaHeaders(res);
    if (!isMultipart(req)) throw unsupportedMediaType('An OpenRosa submission is multipart/form-data with xml_submission_file.');
    const result = await this.fromMultipart(user, req);
    res.setHeader('Content-Type', 'text/xml; charset=utf-8');
    res.status(result.outcome === 'duplicate' ? 202 : 201).send(openRosaResponse(result));
  }

  @Post('api/v1/submissions')
  @RequireAuth()
  @ApiOperation({ summary: 'JSON {"id": id_string, "submission": {...}} or OpenRosa multipart; 201, duplicate 202.' })
  @ApiExtraModels(JsonSubmissionDto)
  @ApiConsumes('application/json', 'multipart/form-data')
  @ApiBody({ schema: { oneOf: [{ $ref: getSchemaPath(JsonSubmissionDto) }, OPENROSA_MULTIPART] } })
  @ApiCreatedResponse({ type: SubmissionAck })
  @ApiAcceptedResponse({ type: SubmissionAck, description: 'The same instance again: nothing stored, nothing forwarded.' })
  async create(@CurrentUser() user: AuthenticatedUser, @Req() req: Req, @Res() res: Res): Promise<void> {
    this.openRosaHeaders(res);
    let result: SubmissionResult;
    if (contentTypeOf(req) === 'application/json') result = await this.fromJson(user, req.body);
    else if (isMultipart(req)) result = await this.fromMultipart(user, req);
    else throw unsupportedMediaType('Send application/json or multipart/form-data (xml_submission_file).');
    res.status(result.outcome === 'duplicate' ? 202 : 201).json(SubmissionsService.successBody(result));
  }

  private async fromJson(user: AuthenticatedUser, body: unknown): Promise<SubmissionResult> {
    const input = await validateInput(JsonSubmissionDto, body);
    const { form, role } = await this.submissions.formAndRoleForSubmission(user, input.id);
    const record = recordFromJson(input.submission);
    return this.submissions.submit({ user, form, role, record, files: [] });
  }

  private async fromMultipart(user: AuthenticatedUser, req: Req): Promise<SubmissionResult> {
    const upload = await readMultipartSubmission(req, {
      attachmentMaxBytes: this.config.ATTACHMENT_MAX_BYTES,
      xmlMaxBytes: this.config.SUBMISSION_XML_MAX_BYTES,
      maxFiles: this.config.SUBMISSION_MAX_ATTACHMENTS,
      tmpDir: this.config.UPLOAD_TMP_DIR,
    });
    try {
      if (upload.xml === null) throw new FieldValidationError({ xml_submission_file: ['This part is required.'] });
      let root;
      try {
        root = parseXml(upload.xml);
      } catch (err) {
        if (err instanceof XmlInputError) throw new FieldValidationError({ xml_submission_file: [err.message] });
        throw err;
      }
      const { form, role } = await this.submissions.formAndRoleForSubmission(user, root.attrs.id ?? root.attrs.xmlns?.split('/').pop());
      const record = recordFromXml(root, form);
      return await this.submissions.submit({ user, form, role, record, xml: upload.xml, files: upload.files });
    } finally {
      await upload.cleanup();
    }
  }
}

function openRosaResponse(result: SubmissionResult): string {
  const message = result.outcome === 'duplicate' ? 'Duplicate submission.' : 'Successful submission.';
  const body = SubmissionsService.successBody(result);
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    '<OpenRosaResponse xmlns="http://openrosa.org/http/response" items="0">' +
    `<message nature="submit_success">${escapeXml(message)}</message>` +
    `<submissionMetadata xmlns="http://www.opendatakit.org/xforms/submission" id="${escapeXml(String(body.formid))}" instanceID="${escapeXml(String(body.instanceID))}" submissionDate="${escapeXml(String(body.submissionDate))}" isComplete="true" markedAsCompleteDate="${escapeXml(String(body.markedAsCompleteDate))}"/>` +
    '</OpenRosaResponse>'
  );
}
