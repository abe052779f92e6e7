import { applyDecorators, Controller, Get, Param, Query, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import type { HttpRequest } from '../auth/http-types.js';
import { RequireAuth } from '../auth/require-auth.decorator.js';
import { CollectConfig } from '../config/collect-config.js';
import { setOpenRosaHeaders } from '../openrosa/openrosa-headers.js';
import { setInertHeaders } from '../storage/served-content.js';
import { requestBaseUrl } from '../wire-formats/media-urls.js';
import { DownloadSubmissionQueryDto, SubmissionListQueryDto } from './briefcase.dto.js';
import { BriefcaseService } from './briefcase.service.js';

const XmlAnswer = (description: string) => applyDecorators(ApiProduces('text/xml'), ApiOkResponse({ schema: { type: 'string', description } }));

type Res = { status(code: number): Res; setHeader(name: string, value: string): void; send(body: string): void };

/**
 * ODK Briefcase's pull API as ODK Aggregate and the Django implementation serve it, global and
 * per owner (docs/encryption.md "Briefcase pull"): how teams take their data home, encrypted
 * data still encrypted. Answers are inert: they hold the submitters' bytes.
 */
@ApiTags('openrosa')
@RequireAuth()
@Controller()
export class BriefcaseController {
  constructor(
    private readonly briefcase: BriefcaseService,
    private readonly config: CollectConfig,
  ) {}

  @Get('view/submissionList')
  @ApiOperation({ summary: "Instance ids of a form's complete submissions, oldest first, paged with `cursor` (readonly and above)." })
  @XmlAnswer('An `<idChunk>` document.')
  async list(@CurrentUser() user: AuthenticatedUser, @Query() q: SubmissionListQueryDto, @Res() res: Res): Promise<void> {
    send(res, await this.briefcase.submissionList(user, null, q), 'submissionList.xml');
  }

  @Get(':username/view/submissionList')
  @ApiOperation({ summary: 'The same for the form of that owner.' })
  @XmlAnswer('An `<idChunk>` document.')
  async ownerList(@CurrentUser() user: AuthenticatedUser, @Param('username') username: string, @Query() q: SubmissionListQueryDto, @Res() res: Res): Promise<void> {
    send(res, await this.briefcase.submissionList(user, username, q), 'submissionList.xml');
  }

  @Get('view/downloadSubmission')
  @ApiOperation({ summary: 'One submission as stored (an encrypted one: its manifest) with its files, MD5 and download addresses (readonly and above).' })
  @XmlAnswer('A `<submission>` document.')
  async download(@CurrentUser() user: AuthenticatedUser, @Query() q: DownloadSubmissionQueryDto, @Req() req: HttpRequest, @Res() res: Res): Promise<void> {
    send(res, await this.briefcase.downloadSubmission(user, null, q.formId, requestBaseUrl(req, this.config)), 'submission.xml');
  }

  @Get(':username/view/downloadSubmission')
  @ApiOperation({ summary: 'The same for the form of that owner.' })
  @XmlAnswer('A `<submission>` document.')
  async ownerDownload(@CurrentUser() user: AuthenticatedUser, @Param('username') username: string, @Query() q: DownloadSubmissionQueryDto, @Req() req: HttpRequest, @Res() res: Res): Promise<void> {
    send(res, await this.briefcase.downloadSubmission(user, username, q.formId, requestBaseUrl(req, this.config)), 'submission.xml');
  }
}

function send(res: Res, xml: string, downloadName: string): void {
  setOpenRosaHeaders(res);
  setInertHeaders(res, downloadName);
  res.setHeader('Content-Type', 'text/xml; charset=utf-8');
  res.status(200).send(xml);
}
