import { ApiProperty } from '@nestjs/swagger';
import { AnyObject, Text } from '@collect/contracts';

/** `POST /api/v1/submissions` with `application/json` (docs/api-conventions.md §Forms and submissions). */
export class JsonSubmissionDto {
  @Text({ required: true, blank: 'missing', requiredMessage: 'The form id_string is required.', message: 'The form id_string is required.', description: "The form's id_string." })
  id: string;

  @AnyObject({
    required: true,
    requiredMessage: 'An object with the answers is required.',
    message: 'An object with the answers is required.',
    description: 'Answers by question name: nested objects for groups (`{"group": {"q": "v"}}`) or flat xpaths (`{"group/q": "v"}`); `meta/instanceID` makes re-sending idempotent.',
  })
  submission: Record<string, unknown>;
}

/**
 * The JsonSubmissionDto of a body that certainly passes its checks (a plain object whose `id` is
 * a non-empty string and whose `submission` is a plain object), built without the validation
 * pipe: for a small submission, class-transformer and class-validator cost more than the rest
 * of its parsing (docs/forms.md, "Intake: caches and one statement"). Any other body gives null,
 * and the caller validates it against the DTO, which answers its 400s.
 */
export function certainJsonSubmission(body: unknown): JsonSubmissionDto | null {
  if (!isPlainObject(body)) return null;
  const { id, submission } = body;
  if (typeof id !== 'string' || id === '' || !isPlainObject(submission)) return null;
  return Object.assign(new JsonSubmissionDto(), { id, submission });
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v) && !(v instanceof ArrayBuffer);
}

/** 201 (stored) or 202 (the same instance again, nothing stored) to a submission. */
export class SubmissionAck {
  @ApiProperty({ type: 'string', enum: ['Successful submission.', 'Duplicate submission.'] })
  message: string;

  @ApiProperty({ type: 'string', description: "The form's id_string." })
  formid: string;

  @ApiProperty({ type: 'string', description: '`uuid:<instance uuid>`.' })
  instanceID: string;

  @ApiProperty({ type: 'string', description: 'UTC, `YYYY-MM-DDTHH:MM:SS`.' })
  submissionDate: string;

  @ApiProperty({ type: 'string', description: 'UTC, `YYYY-MM-DDTHH:MM:SS`.' })
  markedAsCompleteDate: string;
}

/**
 * The submission JSON of spec §2.2 (docs/forms.md "Submission JSON"): the form's answers by
 * xpath plus the `_`-prefixed metadata; its keys follow the form, so the schema lists the
 * metadata only.
 */
export const SUBMISSION_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: true,
  description: "The form's answers flattened by xpath (`group/question`, strings) and the metadata below.",
  properties: Object.fromEntries(
    [
      ['_id', 'integer'], ['_uuid', 'string'], ['_xform_id_string', 'string'], ['_xform_id', 'integer'], ['_status', 'string'], ['_submission_time', 'string'],
      ['_deleted_at', 'string'], ['_geolocation', 'array'], ['_attachments', 'array'], ['_bamboo_dataset_id', 'string'], ['formhub/uuid', 'string'],
      ['_submitted_by', 'string'], ['_version', 'string'], ['_edited', 'boolean'], ['_tags', 'array'], ['_notes', 'array'], ['meta/instanceID', 'string'],
    ].map(([name, type]) => [name, type === 'array' ? { type, items: {} } : { type }]),
  ),
} as const;
