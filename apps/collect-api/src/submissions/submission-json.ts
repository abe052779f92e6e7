import type { FormEntity } from '../forms/form.entity.js';
import type { AttachmentEntity, SubmissionEntity, SubmissionRecord } from './submission.entity.js';
import { geolocationOf } from './submission-record.js';
import { formatSubmissionTime } from '../wire-formats/api-time.js';
import { formUuidHex } from '../wire-formats/form-uuid.js';
import { mediaDownloadUrls } from '../wire-formats/media-urls.js';

export interface AttachmentJson {
  id: number;
  filename: string;
  name: string;
  mimetype: string;
  download_url: string;
  small_download_url: string;
  medium_download_url: string;
  instance: number;
  xform: number;
}

export function attachmentJson(a: Pick<AttachmentEntity, 'id' | 'filename' | 'name' | 'mimetype' | 'submissionId' | 'formId'>, baseUrl: string): AttachmentJson {
  return {
    id: a.id,
    filename: a.filename,
    name: a.name,
    mimetype: a.mimetype,
    ...mediaDownloadUrls(a, baseUrl, 'files'),
    instance: a.submissionId,
    xform: a.formId,
  };
}

export type SubmissionJson = Record<string, unknown>;

/**
 * The one submission JSON (spec §2.2 + docs/api-conventions.md §Submission JSON), used by the data endpoint, the rest
 * service forwarders and media: form fields by xpath (strings), then the metadata fields.
 * `attachments` are the live attachments of this submission. With `reuseAnswers` the answers
 * object (`submission.json`) becomes the result, the metadata set on it in the same order and
 * with the same precedence as the copy: for a caller that owns it and reads it no more (a
 * delivery's freshly parsed snapshot). Copying the 250 answers of the soak's submissions into a
 * new object took 62-70 µs, 12 % of the worker's time per delivery (docs/architecture.md,
 * "The submission record: one pass, few allocations").
 */
export function buildSubmissionJson(input: {
  submission: SubmissionEntity;
  form: Pick<FormEntity, 'id' | 'idString' | 'uuid' | 'fields'> & Partial<Pick<FormEntity, 'bambooDatasetId'>>;
  attachments: AttachmentEntity[];
  submittedBy: string | null;
  baseUrl: string;
  reuseAnswers?: boolean;
}): SubmissionJson {
  const { submission: s, form } = input;
  const metadata = {
    'formhub/uuid': formUuidHex(form.uuid),
    'meta/instanceID': `uuid:${s.uuid}`,
    _id: s.id,
    _uuid: s.uuid,
    _xform_id_string: form.idString,
    _xform_id: form.id,
    _status: s.status,
    _submission_time: formatSubmissionTime(s.dateCreated),
    _deleted_at: s.deletedAt ? formatSubmissionTime(s.deletedAt) : null,
    _geolocation: geolocationOf(s.json, form.fields),
    _attachments: input.attachments.filter((a) => !a.deletedAt).sort((a, b) => a.id - b.id).map((a) => attachmentJson(a, input.baseUrl)),
    // The form's (docs/restservices.md, "`_bamboo_dataset_id`"); a submission stored one of its own before forms held it.
    _bamboo_dataset_id: form.bambooDatasetId || s.bambooDatasetId || '',
    _submitted_by: input.submittedBy,
    _version: s.version,
    _edited: s.edited,
    _tags: [],
    _notes: [],
  };
  return input.reuseAnswers ? Object.assign(s.json, metadata) : { ...s.json, ...metadata };
}
