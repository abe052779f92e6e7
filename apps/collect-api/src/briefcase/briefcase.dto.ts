import { Int, Text } from '@collect/contracts';

/** `GET /view/submissionList` (docs/encryption.md "Briefcase pull"). */
export class SubmissionListQueryDto {
  @Text({ required: true, trim: true, blank: 'refuse', max: 255, description: "The form's id_string." })
  formId: string;

  @Int({ min: 1, max: 2_147_483_647, blankIsMissing: true, description: 'Ids per page: default 100, at most 1,000 (larger values read as 1,000).' })
  numEntries?: number;

  @Text({ max: 64, description: 'The `resumptionCursor` of the previous page; absent or empty for the first.' })
  cursor?: string;
}

/** `GET /view/downloadSubmission`. */
export class DownloadSubmissionQueryDto {
  @Text({ required: true, blank: 'refuse', max: 2_048, description: '`<id_string>[@version=...]/<root>[@key=uuid:...]`, as ODK Briefcase sends it.' })
  formId: string;
}
