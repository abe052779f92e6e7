import { applyDecorators, Controller, Head, HttpCode, NotFoundException, Param, Post, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiConsumes, ApiCreatedResponse, ApiExtraModels, ApiNoContentResponse, ApiOperation, ApiProduces, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { IncomingMessage } from 'node:http';
import { FieldValidationError, NOT_FOUND_DETAIL } from '@collect/contracts';
import { validateInput } from '@collect/platform';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { SubmitClass } from '../auth/scope-class.decorator.js';
import { CollectConfig } from '../config/collect-config.js';
import type { FormEntity } from '../forms/form.entity.js';
import { FormsRepository } from '../forms/forms.repository.js';
import { unsupportedMediaType } from '../forms/forms.service.js';
import type { FormRole } from '../forms/roles.js';
import { setInertHeaders } from '../storage/served-content.js';
import { checkNumberAnswers } from './number-answer.js';
import { recordFromJson, recordFromXml } from './submission-record.js';
import { certainJsonSubmission, JsonSubmissionDto, SubmissionAck } from './submission.dto.js';
import { SubmissionFormResolver } from './submission-form-resolver.js';
import { SubmissionsService, type SubmissionResult } from './submissions.service.js';
import { contentTypeOf } from '../openrosa/body.js';
import { EnvelopeIntake } from '../encrypted-submissions/envelope-intake.js';
import { isMultipart, readMultipartSubmission } from '../openrosa/multipart.js';
import { setOpenRosaHeaders } from '../openrosa/openrosa-headers.js';
import { child, escapeXml, inputLimitsOf, parseXml, XmlInputError, type XmlNode } from '../openrosa/xml.js';

type Res = { status(code: number): Res; setHeader(name: string, value: string): void; send(body: string): void; json(body: unknown): void; end(body?: string): void };
type Req = IncomingMessage & { body?: unknown };
/** Which form an instance goes to: by the global rule or within one owner's forms. */
type FormResolver = (idString: string | undefined, root: XmlNode, fresh: boolean) => Promise<{ form: FormEntity; role: FormRole }>;

/** The OpenRosa multipart body: the instance XML and its attachments. */
const OPENROSA_MULTIPART = {
  type: 'object',
  required: ['xml_submission_file'],
  properties: { xml_submission_file: { type: 'string', format: 'binary', description: 'The instance XML.' } },
  additionalProperties: { type: 'string', format: 'binary', description: 'Attachments, by file name.' },
};

/** OpenAPI of an OpenRosa submission path: multipart in, OpenRosaResponse XML out. */
const OpenRosaSubmissionDocs = () =>
  applyDecorators(
    ApiConsumes('multipart/form-data'),
    ApiBody({ schema: OPENROSA_MULTIPART }),
    ApiProduces('text/xml'),
    ApiCreatedResponse({ schema: { type: 'string', description: 'OpenRosaResponse XML (`submit_success`).' } }),
    ApiAcceptedResponse({ schema: { type: 'string', description: 'OpenRosaResponse XML: the same instance again, nothing stored.' } }),
  );

/**
 * Submission intake: JSON `{"id", "submission"}` and OpenRosa multipart (`xml_submission_file`
 * + attachments) at `POST /api/v1/submissions`, OpenRosa at `POST /submission` (XML answers)
 * and at `POST /{username}/submission`, which only looks among that owner's forms (docs/forms.md).
 */
@ApiTags('submissions')
@SubmitClass()
@Controller()
export class SubmissionController {
  constructor(
    private readonly submissions: SubmissionsService,
    private readonly target: SubmissionFormResolver,
    private readonly forms: FormsRepository,
    private readonly envelopes: EnvelopeIntake,
    private readonly config: CollectConfig,
  ) {}

  private openRosaHeaders(res: Res): void {
    setOpenRosaHeaders(res, this.config.ATTACHMENT_MAX_BYTES);
  }

  /** The OpenRosa pre-flight, as the peers answer it: 401 with WWW-Authenticate without credentials. */
  @Head('submission')
  @HttpCode(204)
  @RequireAuth()
  @ApiOperation({ summary: 'OpenRosa pre-flight: 204 with the OpenRosa headers (401 without credentials).' })
  @ApiNoContentResponse({ description: 'X-OpenRosa-Version and X-OpenRosa-Accept-Content-Length.' })
  head(@Res() res: Res): void {
    this.openRosaHeaders(res);
    res.status(204).end();
  }

  @Head(':username/submission')
  @HttpCode(204)
  @RequireAuth()
  @ApiOperation({ summary: "OpenRosa pre-flight of an owner's submission path: 204, unknown owner 404." })
  @ApiNoContentResponse({ description: 'X-OpenRosa-Version and X-OpenRosa-Accept-Content-Length.' })
  async ownerHead(@Param('username') username: string, @Res() res: Res): Promise<void> {
    if ((await this.forms.activeUserId(username)) === null) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    this.head(res);
  }

  @Post('submission')
  @RequireAuth()
  @ApiOperation({ summary: 'OpenRosa submission (multipart: xml_submission_file + attachments); answers OpenRosa XML.' })
  @OpenRosaSubmissionDocs()
  async openRosa(@CurrentUser() user: AuthenticatedUser, @Req() req: Req, @Res() res: Res): Promise<void> {
    await this.openRosaSubmission(user, req, res, (idString, root, fresh) => this.target.formAndRoleForSubmission(user, idString, formUuidOf(root), fresh));
  }

  @Post(':username/submission')
  @RequireAuth()
  @ApiOperation({ summary: "OpenRosa submission to that owner's form with the instance's id_string, whatever other forms share it." })
  @OpenRosaSubmissionDocs()
  async ownerOpenRosa(@CurrentUser() user: AuthenticatedUser, @Param('username') username: string, @Req() req: Req, @Res() res: Res): Promise<void> {
    await this.openRosaSubmission(user, req, res, (idString, _root, fresh) => this.target.formAndRoleForOwner(user, username, idString, fresh));
  }

  private async openRosaSubmission(user: AuthenticatedUser, req: Req, res: Res, resolve: FormResolver): Promise<void> {
    this.openRosaHeaders(res);
    if (!isMultipart(req)) throw unsupportedMediaType('An OpenRosa submission is multipart/form-data with xml_submission_file.');
    const result = await this.fromMultipart(user, req, res, resolve);
    const body = openRosaResponse(result);
    res.setHeader('Content-Type', 'text/xml; charset=utf-8');
    // The answer echoes the instance's id and instanceID: never a document a browser runs.
    setInertHeaders(res);
    // Written as it is, not through express's send(): send() hashes every body for an ETag
    // (weak, SHA-1), which means nothing on the answer to a POST and was one of the OpenRosa
    // path's per-request costs (docs/architecture.md, "OpenRosa uploads: spooled once, renamed into place").
    res.setHeader('Content-Length', String(Buffer.byteLength(body)));
    res.status(result.outcome === 'duplicate' ? 202 : 201).end(body);
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
    else if (isMultipart(req)) result = await this.fromMultipart(user, req, res, (idString, root, fresh) => this.target.formAndRoleForSubmission(user, idString, formUuidOf(root), fresh));
    else throw unsupportedMediaType('Send application/json or multipart/form-data (xml_submission_file).');
    res.status(result.outcome === 'duplicate' ? 202 : 201).json(SubmissionsService.successBody(result));
  }

  private async fromJson(user: AuthenticatedUser, body: unknown): Promise<SubmissionResult> {
    // The DTO checks that `submission` is an object; class-transformer would first copy it deeply
    // (a 250-question submission: most of the validation's cost), so it sees an empty stand-in
    // and recordFromJson reads the answers (bounded, field names checked).
    // A body that certainly passes the DTO skips the pipe (certainJsonSubmission).
    const answers = isPlainObject(body) && isPlainObject(body.submission) ? body.submission : undefined;
    const input = certainJsonSubmission(body) ?? (await validateInput(JsonSubmissionDto, answers ? { ...body as object, submission: {} } : body));
    const found = { answers: false };
    const record = recordFromJson(answers ?? input.submission, inputLimitsOf(this.config), found);
    // A JSON submission without answers is a 400, as the peers answer it (docs/forms.md, "Submissions").
    // Told by recordFromJson, not counted here: a copy of a 250-answer record's keys was one of its
    // larger garbage items (docs/architecture.md, "The submission record: one pass, few allocations").
    if (!found.answers) throw new FieldValidationError({ submission: ['The submission has no answers.'] });
    const formUuid = typeof record['formhub/uuid'] === 'string' ? record['formhub/uuid'] : undefined;
    // Each attempt gets a record of its own (receive): this one first, read again for a retry.
    let first: typeof record | null = record;
    const recordOfAttempt = () => {
      const own = first ?? recordFromJson(answers ?? input.submission, inputLimitsOf(this.config));
      first = null;
      return own;
    };
    // Numbers are checked against the form the submission goes to (docs/security.md, "Numbers, formulas and names").
    const content = (form: FormEntity) => {
      const own = recordOfAttempt();
      checkNumberAnswers(own, form.fields);
      this.envelopes.refusePlaintextJson(form);
      return { record: own, files: [] };
    };
    return this.submissions.receive(user, (fresh) => this.target.formAndRoleForSubmission(user, input.id, formUuid, fresh), content);
  }

  /**
   * The XML part is parsed and the caller's role on its form checked before any attachment is
   * read (readMultipartSubmission): a refusal ends the request there, with `Connection: close`
   * so the rest of the body is not read either (docs/security.md "Bounded work").
   */
  private async fromMultipart(user: AuthenticatedUser, req: Req, res: Res, resolve: FormResolver): Promise<SubmissionResult> {
    const limits = inputLimitsOf(this.config);
    let upload;
    try {
      upload = await readMultipartSubmission(
        req,
        {
          attachmentMaxBytes: this.config.ATTACHMENT_MAX_BYTES,
          xmlMaxBytes: this.config.SUBMISSION_XML_MAX_BYTES,
          maxFiles: this.config.SUBMISSION_MAX_ATTACHMENTS,
          tmpDir: this.config.UPLOAD_TMP_DIR,
        },
        async (xml) => {
          let root;
          try {
            root = parseXml(xml, limits);
          } catch (err) {
            if (err instanceof XmlInputError) throw new FieldValidationError({ xml_submission_file: [err.message] });
            throw err;
          }
          const idString = root.attrs.id ?? root.attrs.xmlns?.split('/').pop();
          let access = await resolve(idString, root, false);
          // A cached form may have been re-opened since: a closed one is read afresh before refusing.
          if (!access.form.acceptingSubmissions) access = await resolve(idString, root, true);
          SubmissionsService.requireAccepting(access.form);
          return { root, idString, ...access };
        },
      );
    } catch (err) {
      if (!req.complete) res.setHeader('Connection', 'close');
      throw err;
    }
    try {
      const { root, idString } = upload.authorized;
      const xml = upload.xml;
      const files = upload.files;
      // An encrypted envelope is checked and stored whole, a plaintext instance as it is (docs/encryption.md "Intake").
      return await this.envelopes.receive({
        form: upload.authorized.form, root, xml, files, readInstance: (r, form) => recordFromXml(r, form, limits),
        plain: (form) => ({ record: recordFromXml(root, form, limits), xml, root, files, version: root.attrs.version }),
        store: (content) => this.submissions.receive(user, (fresh) => (fresh ? resolve(idString, root, true) : Promise.resolve(upload.authorized)), content),
      });
    } finally {
      await upload.cleanup();
    }
  }
}

/** The form's uuid as the instance names it (`<formhub><uuid>`), when it does. */
function formUuidOf(root: XmlNode): string | undefined {
  return child(child(root, 'formhub'), 'uuid')?.text || undefined;
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

function isPlainObject(v: unknown): v is Record<string, unknown> & { submission?: unknown } {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);
}
